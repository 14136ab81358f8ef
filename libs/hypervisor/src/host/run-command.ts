import { execFile, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** Runs a host tool (mount, umount …) and fails with its stderr, so errors say what went wrong. */
export async function runCommand(file: string, args: string[]): Promise<string> {
  try {
    const { stdout } = await execFileAsync(file, args, { encoding: 'utf8' });
    return stdout;
  } catch (error: any) {
    const detail = String(error.stderr ?? '').trim() || error.message;
    throw new Error(`${file} ${args.join(' ')} failed: ${detail}`);
  }
}

/** Runs a long host tool and hands every output line to `log` as it comes (progress of a build). */
export function runStreamingLines(file: string, args: string[], log: (line: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const tail: string[] = [];
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) => {
        tail.push(line);
        if (tail.length > 20) tail.shift();
        log(line);
      });
    }
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`${file} exited with ${signal ?? code}: ${tail.join('\n')}`));
    });
  });
}

/** Runs a host tool with `input` on its stdin (a batch for `ip -b -` or `nft -f -`); fails with its stderr. */
export function runCommandWithInput(file: string, args: string[], input: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (data) => (stdout += data));
    child.stderr.on('data', (data) => (stderr += data));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) resolve(stdout);
      else reject(new Error(`${file} ${args.join(' ')} failed (${signal ?? code}): ${stderr.trim() || stdout.trim()}`));
    });
    child.stdin.on('error', () => undefined); // a tool that exits early closes its stdin: its exit status says why
    child.stdin.end(input);
  });
}
