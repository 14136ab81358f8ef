import { execFile } from 'node:child_process';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { baseRootfsPath, MachineLayout, runtimeOf, runtimeUnder } from '@arbor/hypervisor/primitives';
import { timed } from './stats';

const run = promisify(execFile);
const HOST_ENV = { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' };

export interface SandboxPrimitiveSamples {
  /** The OCI runtime the machine runs under (crun or runc), whose calls are measured. */
  runtime: string;
  runtimeExecTrue: number[];
  overlayMount: number[];
  freezerCycle: number[];
  copyUpper: number[];
}

export interface SandboxTarget {
  /** The driver's state directory (machines/sandbox under the data dir). */
  stateDir: string;
  cacheDir: string;
  /** A running machine of the driver: its container and upper layer are the subjects. */
  vm_id: string;
  /** Where copies and mounts go (the same file system as the driver's snapshots). */
  scratchDir: string;
}

/**
 * The host tools the sandbox driver is built from, each called directly on one of the driver's
 * machines, with none of the driver's bookkeeping: the floor its operations stand on.
 */
export async function measureSandboxPrimitives(target: SandboxTarget, counts: { ops: number; execs: number }): Promise<SandboxPrimitiveSamples> {
  // A machine claimed from the warm pool runs under the id it was booted with; the runtime its record names.
  const layout = new MachineLayout(target.stateDir, target.vm_id);
  const record = await layout.readRecord();
  const container = record?.container ?? target.vm_id;
  const name = runtimeOf(record);
  const runtime = runtimeUnder(target.stateDir, name);
  const samples: SandboxPrimitiveSamples = { runtime: name, runtimeExecTrue: [], overlayMount: [], freezerCycle: [], copyUpper: [] };
  const exec = ['--root', runtime.root, 'exec', container, 'true'];
  for (let i = 0; i < counts.execs; i++) samples.runtimeExecTrue.push((await timed(() => run(name, exec, { env: HOST_ENV })))[1]);

  // The runtime's freezer: pause then resume, each waited out by the runtime. Measured after the
  // driver benchmark's pause watch.
  for (let i = 0; i < counts.ops; i++) {
    samples.freezerCycle.push((await timed(async () => {
      await runtime.setPaused(container, true);
      await runtime.setPaused(container, false);
    }))[1]);
  }

  await mkdir(target.scratchDir, { recursive: true });
  const upper = layout.upper;
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
