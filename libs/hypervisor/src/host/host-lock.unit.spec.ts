import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withHostLock } from './host-lock';

/**
 * A process that holds the lock (flock(1): the same flock(2) lock; --close, so only flock itself
 * holds it) until it is killed or `ms` pass, then touches `done` before it lets go. It leads a
 * process group of its own, so a kill takes its shell and sleep along (they would outlive the test).
 */
function otherProcessHolding(lockPath: string, ms: number, done: string): Promise<{ kill: () => void }> {
  return new Promise((resolve, reject) => {
    const child = spawn('flock', ['--exclusive', '--close', lockPath, 'sh', '-c', `echo held; sleep ${ms / 1000}; touch ${done}`], { stdio: ['ignore', 'pipe', 'inherit'], detached: true });
    child.once('error', reject);
    child.stdout.once('data', () => resolve({ kill: () => process.kill(-child.pid!, 'SIGKILL') }));
  });
}

describe('withHostLock', () => {
  let dir: string;
  let lockPath: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'arbor-lock-'));
    lockPath = join(dir, '.lock');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('runs the holders of this process one at a time, in call order, whatever each ends in', async () => {
    const seen: string[] = [];
    const hold = (name: string, fail = false) =>
      withHostLock(lockPath, async () => {
        seen.push(`${name} in`);
        await new Promise((r) => setTimeout(r, 10));
        seen.push(`${name} out`);
        if (fail) throw new Error(`${name} failed`);
        return name;
      });
    const results = await Promise.allSettled([hold('a'), hold('b', true), hold('c')]);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual(['a', 'b failed', 'c']);
    expect(seen).toEqual(['a in', 'a out', 'b in', 'b out', 'c in', 'c out']);
  });

  it('waits while another process holds the lock', async () => {
    const done = join(dir, 'done');
    await otherProcessHolding(lockPath, 400, done);
    await expect(withHostLock(lockPath, async () => existsSync(done))).resolves.toBe(true);
  });

  it('keeps another process out while held, and lets it in once released', async () => {
    const { stillWaiting, otherExit } = await withHostLock(lockPath, async () => {
      const other = spawn('flock', ['--exclusive', lockPath, 'true']);
      const exit = new Promise<number | null>((done) => other.once('exit', (code) => done(code)));
      await new Promise((r) => setTimeout(r, 300));
      return { stillWaiting: other.exitCode === null, otherExit: { exit } }; // wrapped: the hold must not wait for it
    });
    expect(stillWaiting).toBe(true);
    await expect(otherExit.exit).resolves.toBe(0);
  });

  it('gets the lock once a process holding it is killed', async () => {
    const done = join(dir, 'done');
    const other = await otherProcessHolding(lockPath, 60_000, done);
    setTimeout(other.kill, 200);
    await expect(withHostLock(lockPath, async () => existsSync(done))).resolves.toBe(false);
  });
});
