import { isAlive, type ProcessIdentity } from './process-identity';
import { sleep } from './sleep';

/** SIGKILL to `pid` (a negative pid: its process group), if it still exists. */
export function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    /* already gone */
  }
}

/**
 * SIGKILLs the process and waits until it is gone: not running, and reaped when it is this
 * process's child (`exited`, its exit event). Resolves false if it still runs after about 5 s
 * (e.g. stuck in the kernel); the caller decides whether that is an error.
 */
export async function killAndWait(identity: ProcessIdentity, exited?: Promise<void>): Promise<boolean> {
  for (let attempt = 0; attempt < 500 && (await isAlive(identity)); attempt++) {
    killQuietly(identity.pid);
    await sleep(10);
  }
  if (exited) await exited;
  return !(await isAlive(identity));
}
