import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The file system calls a durability check looks at (fd arguments printed with their paths, `-y`). */
const TRACED = 'trace=openat,rename,renameat,renameat2,link,linkat,fsync,fdatasync,syncfs,newfstatat,statx';

/**
 * Runs `work` with strace attached to this process and every thread and child it starts, and
 * returns the traced calls, one line each, fds shown as `fd</path>` (Debian's `strace`, root).
 * A stat of a unique path marks when the trace has started and when it has caught up, so no
 * call of `work` is missed and none after it is counted.
 */
export async function traceFileSyscalls<T>(work: () => Promise<T>): Promise<{ result: T; calls: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'arbor-strace-'));
  const output = join(dir, 'trace');
  const tracer = spawn('strace', ['-f', '-qq', '-y', '-e', TRACED, '-o', output, '-p', String(process.pid)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  tracer.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => tracer.once('exit', () => resolve()));
  const mark = async (name: string) => {
    const path = join(dir, `${name}-${randomUUID()}`);
    for (let tries = 0; ; tries++) {
      await stat(path).catch(() => undefined);
      if (existsSync(output) && readFileSync(output, 'utf8').includes(path)) return;
      if (tracer.exitCode !== null || tries > 1000) throw new Error(`strace did not trace this process: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  try {
    await mark('start');
    const result = await work();
    await mark('end');
    return { result, calls: joinInterrupted(readFileSync(output, 'utf8').split('\n').filter(Boolean)) };
  } finally {
    tracer.kill('SIGINT');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * One line per call, `PID call(...)`: when another traced thread makes a call meanwhile, strace splits a call into
 * `PID name(args <unfinished ...>` and, later, `PID <... name resumed>rest`. The call is put back
 * together where it began, so a pattern over a whole call matches however busy the process was.
 */
function joinInterrupted(lines: string[]): string[] {
  const calls: string[] = [];
  const open = new Map<string, number>();
  for (const raw of lines) {
    const line = raw.replace(/^(\d+)\s+/, '$1 '); // strace pads a short pid to a column
    const unfinished = line.match(/^(\d+) (.*) <unfinished \.\.\.>$/);
    const resumed = line.match(/^(\d+) <\.\.\. [\w]+ resumed>(.*)$/);
    if (unfinished) {
      open.set(unfinished[1], calls.length);
      calls.push(`${unfinished[1]} ${unfinished[2]}`);
    } else if (resumed && open.has(resumed[1])) {
      calls[open.get(resumed[1])!] += resumed[2];
      open.delete(resumed[1]);
    } else {
      calls.push(line);
    }
  }
  return calls;
}

/** The index of the first call matching `pattern` at or after `from` (-1 when none). */
export function indexOfCall(calls: string[], pattern: RegExp, from = 0): number {
  for (let i = from; i < calls.length; i++) if (pattern.test(calls[i])) return i;
  return -1;
}
