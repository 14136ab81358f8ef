import { execFile } from 'node:child_process';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { baseRootfsPath, machineCgroups, MachineLayout } from '@arbor/hypervisor/primitives';
import { timed } from './stats';

const run = promisify(execFile);
const HOST_ENV = { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' };

export interface SandboxPrimitiveSamples {
  nsenterTrue: number[];
  unshareTrue: number[];
  overlayMount: number[];
  freezerCycle: number[];
  copyUpper: number[];
}

export interface SandboxTarget {
  /** The driver's state directory (machines/sandbox under the data dir). */
  stateDir: string;
  cacheDir: string;
  /** A running machine of the driver: its namespaces, cgroup and upper layer are the subjects. */
  vm_id: string;
  initPid: number;
  /** Where copies and mounts go (the same file system as the driver's snapshots). */
  scratchDir: string;
}

/**
 * The host tools the sandbox driver is built from, each called directly on one of the driver's
 * machines, with none of the driver's bookkeeping: the floor its operations stand on.
 */
export async function measureSandboxPrimitives(target: SandboxTarget, counts: { ops: number; execs: number }): Promise<SandboxPrimitiveSamples> {
  const samples: SandboxPrimitiveSamples = { nsenterTrue: [], unshareTrue: [], overlayMount: [], freezerCycle: [], copyUpper: [] };
  const nsenter = ['--target', String(target.initPid), '-m', '-u', '-i', '-p', '-r', 'true'];
  for (let i = 0; i < counts.execs; i++) samples.nsenterTrue.push((await timed(() => run('nsenter', nsenter, { env: HOST_ENV })))[1]);

  const unshare = ['--mount', '--pid', '--uts', '--ipc', '--fork', '--propagation', 'private', 'true'];
  for (let i = 0; i < counts.ops; i++) samples.unshareTrue.push((await timed(() => run('unshare', unshare, { env: HOST_ENV })))[1]);

  // The freezer file written and read back until reached (v1 freezer.state, v2 cgroup.freeze), with
  // none of the driver's bookkeeping around it. Measured after the driver benchmark's pause watch.
  const cgroups = machineCgroups(target.vm_id);
  for (let i = 0; i < counts.ops; i++) {
    samples.freezerCycle.push((await timed(async () => {
      await cgroups.setFrozen(true);
      await cgroups.setFrozen(false);
    }))[1]);
  }

  const upper = new MachineLayout(target.stateDir, target.vm_id).upper;
  for (let i = 0; i < counts.ops; i++) {
    const copy = join(target.scratchDir, `copy-${i}`);
    await mkdir(copy, { recursive: true });
    samples.copyUpper.push((await timed(() => run('cp', ['-a', `${upper}/.`, copy])))[1]);
    await rm(copy, { recursive: true, force: true });
  }

  const lower = baseRootfsPath(target.cacheDir);
  for (let i = 0; i < counts.ops; i++) {
    const dir = join(target.scratchDir, `overlay-${i}`);
    const [upperDir, work, merged] = ['upper', 'work', 'merged'].map((name) => join(dir, name));
    for (const path of [upperDir, work, merged]) await mkdir(path, { recursive: true });
    const options = `lowerdir=${lower},upperdir=${upperDir},workdir=${work},redirect_dir=off,metacopy=off,index=off`;
    try {
      samples.overlayMount.push((await timed(() => run('mount', ['-t', 'overlay', 'overlay', '-o', options, merged])))[1]);
    } finally {
      await run('umount', [merged]).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    }
  }
  return samples;
}

/** One freezer transition, waited out the way the kernel reports it (FREEZING is transient). */
