import { spawn } from 'node:child_process';

/**
 * Runs `work` while holding an exclusive flock(1) on `lockPath`, across processes. The lock is held
 * by a helper `flock … cat` reading our pipe, so the kernel releases it even if this process dies.
 */
export async function withHostLock<T>(lockPath: string, work: () => Promise<T>): Promise<T> {
  const holder = spawn('flock', ['--exclusive', lockPath, 'sh', '-c', 'echo locked; exec cat >/dev/null'], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => holder.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    let stderr = '';
    holder.stderr.on('data', (data) => (stderr += data));
    holder.stdout.once('data', () => resolve());
    holder.once('error', reject);
    holder.once('close', (code) => reject(new Error(`flock ${lockPath} failed (${code}): ${stderr.trim()}`)));
  });
  try {
    return await work();
  } finally {
    holder.stdin.end();
    await exited;
  }
}
