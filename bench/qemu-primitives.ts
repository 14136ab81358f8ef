import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { GuestAgentClient, type GuestExecStatus, type QemuBaseImage, DISK_DEVICE, qemuArguments, type QemuAccel, killAndWait, launchQemu, type QemuProcess, createOverlay, createOverlayOnFuture, QmpClient, isAlive } from '@arbor/hypervisor/primitives';
import { timed } from './stats';

export interface QemuPrimitiveSamples {
  /** QEMU process start → guest agent answers guest-ping (a cold boot, nothing else). */
  startToPing: number[];
  /** guest-exec /bin/true, then guest-exec-status until exited (no sleeps between polls). */
  guestExecTrue: number[];
  /** QMP stop, then cont. */
  stopCont: number[];
  /** QMP blockdev-snapshot-sync onto a pre-created overlay, on the running machine. */
  snapshotSync: number[];
  /** stop → blockdev-snapshot-sync → migrate to a file → cont: the capture the driver pauses for. */
  capturePause: number[];
  /** QEMU start with -incoming defer → migrate-incoming → cont → guest-ping (restore of a capture). */
  restoreToPing: number[];
}

interface BareMachine {
  dir: string;
  process: QemuProcess;
  qmp: QmpClient;
  agent: GuestAgentClient;
  /** Top of its disk chain and the next layer number. */
  disk: string;
  layer: number;
  /** Disk size in the overlay headers: the base image's, as every layer here sits on it. */
  sizeMib: number;
}

const BOOT_TIMEOUT_MS = 180_000;
const MEM_MIB = 256;
const UNLIMITED_MIGRATION = 64 * 1024 * 1024 * 1024;

/**
 * QEMU, QMP and the guest agent driven directly, with the driver's own command line and clients
 * but none of its bookkeeping (records, identity, clock, fsfreeze, locks): the floor the driver's
 * operations stand on. Every process started here is killed before this returns.
 */
export async function measureQemuPrimitives(
  image: QemuBaseImage,
  accel: QemuAccel,
  workDir: string,
  counts: { creates: number; execs: number; commits: number; branches: number },
): Promise<QemuPrimitiveSamples> {
  const samples: QemuPrimitiveSamples = { startToPing: [], guestExecTrue: [], stopCont: [], snapshotSync: [], capturePause: [], restoreToPing: [] };
  const machines: BareMachine[] = [];
  const boot = async (name: string, disk: string, incoming: boolean): Promise<BareMachine> => {
    const dir = join(workDir, name);
    await mkdir(dir, { recursive: true });
    const sockets = { qmp: join(dir, 'qmp.sock'), agent: join(dir, 'agent.sock') };
    const args = qemuArguments({
      name: `arbor-bench-${name}`, accel, vcpus: 1, memMib: MEM_MIB, image, disk, kitDisk: image.kit_disk,
      qmpSocket: sockets.qmp, agentSocket: sockets.agent, serialLog: join(dir, 'serial.log'), incoming,
    });
    const process = await launchQemu(args, join(dir, 'qemu.log'), sockets.qmp);
    const qmp = await QmpClient.connect(sockets.qmp).catch(async (error) => {
      await killAndWait(process.identity, process.exited);
      throw error;
    });
    const machine: BareMachine = { dir, process, qmp, agent: new GuestAgentClient(sockets.agent), disk, layer: 1, sizeMib: image.disk_size_mib };
    machines.push(machine);
    return machine;
  };
  const ping = (machine: BareMachine) => machine.agent.waitUntilReady(BOOT_TIMEOUT_MS, () => isAlive(machine.process.identity));
  const kill = async (machine: BareMachine) => {
    machine.agent.close();
    machine.qmp.close();
    await killAndWait(machine.process.identity, machine.process.exited);
    machines.splice(machines.indexOf(machine), 1);
  };

  await mkdir(workDir, { recursive: true });
  try {
    let source: BareMachine | null = null;
    for (let i = 0; i < counts.creates; i++) {
      const disk = join(workDir, `boot-${i}.qcow2`);
      await createOverlay(disk, image.disk);
      const [machine, ms] = await timed(async () => {
        const booted = await boot(`boot-${i}`, disk, false);
        await ping(booted);
        return booted;
      });
      samples.startToPing.push(ms);
      if (source) await kill(source); // keep only the newest: idle TCG guests still take CPU
      source = machine;
    }
    if (!source) throw new Error('no bare machine booted');

    for (let i = 0; i < counts.execs; i++) samples.guestExecTrue.push((await timed(() => guestExecTrue(source.agent)))[1]);
    for (let i = 0; i < counts.commits; i++) {
      samples.stopCont.push((await timed(async () => {
        await source.qmp.execute('stop');
        await source.qmp.execute('cont');
      }))[1]);
    }
    for (let i = 0; i < counts.commits; i++) {
      const newTop = await nextLayer(source);
      samples.snapshotSync.push((await timed(() => snapshotSync(source, newTop)))[1]);
      source.disk = newTop;
    }

    await source.qmp.execute('migrate-set-parameters', { 'max-bandwidth': UNLIMITED_MIGRATION });
    for (let i = 0; i < counts.branches; i++) {
      const frozenLayer = source.disk;
      const newTop = await nextLayer(source);
      const memory = join(workDir, `memory-${i}`);
      samples.capturePause.push((await timed(async () => {
        await source.qmp.execute('stop');
        await snapshotSync(source, newTop);
        await source.qmp.execute('migrate', { uri: `exec:cat > ${memory}` });
        await waitForStatus(source.qmp, 'query-migrate', (status) => status === 'completed', ['failed', 'cancelled']);
        await source.qmp.execute('cont');
      }))[1]);
      source.disk = newTop;
      const childDisk = join(workDir, `child-${i}.qcow2`);
      await createOverlay(childDisk, frozenLayer);
      const [child, ms] = await timed(async () => {
        const restored = await boot(`child-${i}`, childDisk, true);
        await restored.qmp.execute('migrate-incoming', { uri: `exec:cat ${memory}` });
        await waitForStatus(restored.qmp, 'query-status', (status) => status !== 'inmigrate', ['shutdown', 'internal-error']);
        await restored.qmp.execute('cont');
        await ping(restored);
        return restored;
      });
      samples.restoreToPing.push(ms);
      await kill(child);
      await rm(memory, { force: true });
    }
    return samples;
  } finally {
    for (const machine of [...machines]) await kill(machine).catch(() => undefined);
  }
}

/** A bare exec: start the process, then ask for its status until it has exited. */
async function guestExecTrue(agent: GuestAgentClient): Promise<void> {
  const { pid } = await agent.request<{ pid: number }>('guest-exec', { path: '/bin/true' });
  for (;;) {
    const status = await agent.request<GuestExecStatus>('guest-exec-status', { pid });
    if (status.exited) {
      if (status.exitcode !== 0) throw new Error(`bare guest-exec true exited ${status.exitcode}`);
      return;
    }
  }
}

/** Pre-creates the next overlay (outside any timing), named on the machine's current top. */
async function nextLayer(machine: BareMachine): Promise<string> {
  const path = join(machine.dir, `disk-${machine.layer++}.qcow2`);
  await createOverlayOnFuture(path, machine.disk, machine.sizeMib);
  return path;
}

function snapshotSync(machine: BareMachine, newTop: string): Promise<unknown> {
  return machine.qmp.execute('blockdev-snapshot-sync', { device: DISK_DEVICE, 'snapshot-file': newTop, format: 'qcow2', mode: 'existing' });
}

/** Polls a QMP query (no sleeps, so the figure is QEMU's own time) until `done` says so. */
async function waitForStatus(qmp: QmpClient, query: 'query-migrate' | 'query-status', done: (status: string) => boolean, failed: string[]): Promise<void> {
  for (;;) {
    const { status } = await qmp.execute<{ status?: string }>(query);
    if (status !== undefined && done(status)) return;
    if (status !== undefined && failed.includes(status)) throw new Error(`${query}: ${status}`);
  }
}
