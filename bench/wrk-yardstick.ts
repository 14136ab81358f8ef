import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

/** What wrk measured: requests a second and its latency percentiles (ms). */
export interface WrkRound {
  rate: number;
  p50: number;
  p99: number;
}

/** Whether wrk is installed (the edge group of scripts/install-debian-packages.sh). */
export function wrkInstalled(): boolean {
  return spawnSync('wrk', ['--version'], { encoding: 'utf8' }).error === undefined;
}

/**
 * GETs `paths` (in turn, per connection) over `connections` kept-alive connections for `seconds`,
 * with one thread of wrk, a load generator in C: a cross-check that the readers' Node client,
 * which costs the machine about as much CPU per request as the service does, is not what the
 * reads benchmark measures. Throws unless every answer was a 2xx. Asynchronous: the service may
 * share this process's event loop.
 */
export async function wrkRound(baseUrl: string, headers: Record<string, string>, paths: string[], connections: number, seconds: number): Promise<WrkRound> {
  const dir = mkdtempSync(join(tmpdir(), 'arbor-bench-wrk-'));
  try {
    const script = join(dir, 'paths.lua');
    const headerTable = Object.entries(headers)
      .map(([name, value]) => `[${JSON.stringify(name)}] = ${JSON.stringify(value)}`)
      .join(', ');
    writeFileSync(
      script,
      [
        `local paths = { ${paths.map((path) => JSON.stringify(path)).join(', ')} }`,
        'local next = 0',
        'request = function()',
        '  next = next % #paths + 1',
        `  return wrk.format("GET", paths[next], { ${headerTable} })`,
        'end',
        '',
      ].join('\n'),
    );
    const run = await promisify(execFile)('wrk', ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency', '-s', script, baseUrl], { encoding: 'utf8' });
    if (/Non-2xx or 3xx responses/.test(run.stdout)) throw new Error(`wrk saw answers other than 2xx:\n${run.stdout}`);
    const field = (name: string, pattern: RegExp) => {
      const match = pattern.exec(run.stdout);
      if (!match) throw new Error(`wrk printed no ${name}:\n${run.stdout}`);
      return match;
    };
    const ms = (label: string) => {
      const [, value, unit] = field(`${label} latency`, new RegExp(`^\\s+${label}\\s+([\\d.]+)(us|ms|s)\\s*$`, 'm'));
      return Number(value) * { us: 0.001, ms: 1, s: 1000 }[unit as 'us' | 'ms' | 's'];
    };
    return { rate: Number(field('rate', /Requests\/sec:\s+([\d.]+)/)[1]), p50: ms('50%'), p99: ms('99%') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
