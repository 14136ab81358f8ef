import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sleep } from '../host/sleep';
import { CGROUP_ROOT, isUnified } from './cgroup-probe';
import { MACHINES_CGROUP } from './container-config';

/** Tries of a v1 freeze (what runc 1.1 allows), a thaw and a short rest after every 50. */
const V1_FREEZE_ATTEMPTS = 1000;
/** How long a v2 freeze may take to be reported done (cgroup.events) before it is undone. */
const V2_FREEZE_TIMEOUT_MS = 10_000;

/**
 * Freezes and thaws a machine through its cgroup freezer, as `runc pause` and `runc resume` do,
 * without starting runc (a Go binary: ~7 ms a call at load 1, twice per commit). runc keeps no
 * paused state of its own: its status, like the driver's (isMachineFrozen), is read from the same
 * freezer file, so runc and the driver keep one view. Cgroup files are written synchronously: they
 * answer at once, the thread pool may not.
 */
export class MachineFreezer {
  constructor(private readonly root = CGROUP_ROOT) {}

  /** Returns once the machine is frozen (every process stopped) or thawed; throws if it has no cgroup. */
  async setFrozen(vmId: string, frozen: boolean): Promise<void> {
    if (isUnified(this.root)) await this.setUnified(join(this.root, MACHINES_CGROUP, vmId), frozen);
    else await this.setV1(join(this.root, 'freezer', MACHINES_CGROUP, vmId, 'freezer.state'), frozen);
  }

  /**
   * v1: FROZEN is written until the state reads FROZEN (it passes through FREEZING, and may stick
   * there while a process is in an uninterruptible call); every 50 tries the group is thawed a
   * moment, and after V1_FREEZE_ATTEMPTS it is left thawed and the freeze fails (runc's loop).
   */
  private async setV1(state: string, frozen: boolean): Promise<void> {
    if (!frozen) return writeFileSync(state, 'THAWED');
    for (let attempt = 0; attempt < V1_FREEZE_ATTEMPTS; attempt++) {
      if (attempt % 50 === 49) {
        writeFileSync(state, 'THAWED');
        await sleep(10);
      }
      writeFileSync(state, 'FROZEN');
      const now = readFileSync(state, 'utf8').trim();
      if (now === 'FROZEN') return;
      if (now !== 'FREEZING') break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    writeFileSync(state, 'THAWED');
    throw new Error(`could not freeze ${state}: it stays ${readFileSync(state, 'utf8').trim()}`);
  }

  /** v2: cgroup.freeze is set, and a freeze waits until cgroup.events says the group is frozen. */
  private async setUnified(dir: string, frozen: boolean): Promise<void> {
    writeFileSync(join(dir, 'cgroup.freeze'), frozen ? '1' : '0');
    if (!frozen) return;
    const deadline = Date.now() + V2_FREEZE_TIMEOUT_MS;
    while (!/^frozen 1$/m.test(readFileSync(join(dir, 'cgroup.events'), 'utf8'))) {
      if (Date.now() > deadline) {
        writeFileSync(join(dir, 'cgroup.freeze'), '0');
        throw new Error(`could not freeze the cgroup ${dir} within ${V2_FREEZE_TIMEOUT_MS / 1000} s`);
      }
      await sleep(1);
    }
  }
}
