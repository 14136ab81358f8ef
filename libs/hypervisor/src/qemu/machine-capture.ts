import { copyFile, link, mkdir, rm } from 'node:fs/promises';
import type { CommitOptions, SnapshotInfo } from '../hypervisor-driver.port';
import { allocatedBytes } from '../host/allocated-bytes';
import { linkOrCopy } from '../host/link-or-copy';
import type { LiveMachine } from './machine-connections';
import { allowFastMigration, saveMemory } from './memory-migration';
import { createOverlayOnFuture, flattenOnto, type BaseFormat } from './qcow2-chain';
import { handToQemu, nameInsideQemu, sealLayer } from './qemu-confinement';
import { DISK_DEVICE } from './qemu-command-line';
import type { QemuMachineRecord } from './qemu-machine-layout';
import type { QemuSnapshotRecord, QemuSnapshotStore } from './qemu-snapshot-store';

/**
 * Longest chain of snapshot layers a snapshot may sit on before its layer is flattened onto the
 * base image: each layer is one more lookup on a cache miss and one more open file per machine,
 * while flattening costs a full copy of the changed data; 8 keeps reads near a plain overlay's
 * and flattens once every 8 generations.
 */
export const MAX_CHAIN_DEPTH = 8;

export interface CaptureContext {
  snapshots: QemuSnapshotStore;
  /** The disk a machine's chain ends in (its image's), onto which a layer is flattened once its chain is too long. */
  baseDisk: (record: QemuMachineRecord) => Promise<BaseDisk>;
  /** The host's kit helper (arbor-guest.c), which writes the memory into the snapshot's file. */
  helper: () => Promise<string>;
  log: (line: string) => void;
}

/** The disk at the bottom of a chain: the default image's qcow2 or a built image's raw ext4. */
export interface BaseDisk {
  path: string;
  format: BaseFormat;
}

/**
 * Captures a live machine into the snapshot `snapshot_id`: memory + disk at one instant (see
 * checkpoint), then the captured disk layer published under the snapshot. A machine that was paused,
 * or is to stay paused, never runs: it is left as the migration left it (`captured` in its
 * record), and resume does the rest. Call under the machine's lock.
 */
export async function captureMachine(
  context: CaptureContext,
  machine: LiveMachine,
  snapshot_id: string,
  options: CommitOptions,
): Promise<SnapshotInfo> {
  const { snapshots, log } = context;
  const { qmp, layout, record, state } = machine;
  if (await snapshots.read(snapshot_id)) throw new Error(`snapshot ${snapshot_id} already exists`);
  const { status } = await qmp.execute<{ status: string }>('query-status');
  if (status === 'postmigrate') {
    // Captured by an earlier commit and not run since: that snapshot holds exactly this state.
    const captured = record.captured ? await snapshots.read(record.captured.snapshot_id) : null;
    if (captured) return copySnapshot(context, captured, snapshot_id);
    // A commit that crashed before recording its capture: take the disks back the only way
    // QEMU 7.2 has (the guest runs for the few milliseconds between the two commands).
    log(`qemu: ${record.vm_id} was left captured by an unrecorded commit; reactivating its disks`);
    await qmp.execute('cont');
    await qmp.execute('stop');
  }
  const wasRunning = state === 'running';
  const staysPaused = !wasRunning || options.keep_paused === true;
  const capturedLayer = record.disk;
  const onNewTop: QemuMachineRecord = { ...record, disk: layout.layerPath(record.next_layer), next_layer: record.next_layer + 1 };
  await checkpoint(context, machine, snapshot_id, onNewTop, staysPaused);

  // The captured layer is immutable from now on: publish it under the snapshot without moving the
  // file QEMU has open (a hard link), or as a flattened copy when the chain got too long.
  const snapshotDisk = snapshots.diskPath(snapshot_id);
  let depth = record.depth + 1;
  if (depth > MAX_CHAIN_DEPTH) {
    const base = await context.baseDisk(record);
    await flattenOnto(capturedLayer, base.path, snapshotDisk, base.format);
    depth = 1;
  } else {
    await linkOrCopy(capturedLayer, snapshotDisk);
  }
  // Immutable from now on, and no longer QEMU's: it may still read it (its backing), never write it.
  await sealLayer(capturedLayer);
  const info: SnapshotInfo = {
    snapshot_id,
    source_vm_id: record.vm_id,
    includes_memory: true,
    vcpu_count: record.vcpu_count,
    mem_size_mib: record.mem_size_mib,
    fs_size_mib: record.fs_size_mib,
    created_at: new Date().toISOString(),
    size_bytes: await allocatedBytes(snapshots.dir(snapshot_id)),
  };
  await snapshots.write({
    info,
    accel: record.accel,
    env: record.env,
    depth,
    frozen: false,
    nic: Boolean(record.nic),
    image_id: record.image_id ?? null,
    kit_disk: record.kit_disk ?? null,
  });
  const captured = staysPaused ? { snapshot_id, frozen: false } : undefined;
  await layout.writeRecord({ ...onNewTop, depth, captured });
  log(`qemu: ${record.vm_id} committed to ${snapshot_id} (chain depth ${depth}${staysPaused ? ', left paused' : ''})`);
  return info;
}

/**
 * Memory + disk at one instant: stop (QEMU drains the disk's requests; those still in the guest's
 * queues travel with the memory), take the external disk snapshot (the current top becomes
 * immutable and the machine goes on on `onNewTop.disk`), migrate the memory to the snapshot's
 * file, then, unless it stays paused, continue. The guest's file systems are not frozen: a layer
 * is only ever used with the memory captured with it, which holds everything the guest had not
 * yet written (as a live migration does), so freezing bought nothing but a write stall in the
 * source and a thaw in every machine restored from it. (The layer alone is as a disk after a power
 * cut: journaled, not clean.)
 *
 * Each step that changes the machine registers its undo; when a later step fails they run newest
 * first and the machine is left as it was, with one exception: once the disk snapshot is taken the
 * machine runs on the new top, whose backing file is the snapshot's layer, so that layer is kept
 * (retired, without a snapshot) and the chain stays whole.
 */
async function checkpoint(
  { snapshots, helper, log }: CaptureContext,
  { qmp, layout, record, state }: LiveMachine,
  snapshot_id: string,
  onNewTop: QemuMachineRecord,
  staysPaused: boolean,
): Promise<void> {
  const snapshotDir = snapshots.dir(snapshot_id);
  const snapshotDisk = snapshots.diskPath(snapshot_id);
  await rm(snapshotDir, { recursive: true, force: true }); // an unfinished capture of a crashed worker
  await mkdir(snapshotDir, { recursive: true });
  // The new top names the snapshot's published layer as its backing file from the start (the
  // layer is linked there once captured), so no header ever points into a machine directory.
  await createOverlayOnFuture(onNewTop.disk, snapshotDisk, record.fs_size_mib);
  await handToQemu(onNewTop.disk); // QEMU opens it, as its own user, at blockdev-snapshot-sync
  const memoryWriter = await helper();
  const undo = new UndoStack();
  const discardFiles = undo.push(async () => {
    await rm(snapshotDir, { recursive: true, force: true });
    await rm(onNewTop.disk, { force: true });
  });
  try {
    await allowFastMigration(qmp);
    let continued: (() => void) | undefined;
    if (state === 'running') {
      await qmp.execute('stop');
      continued = undo.push(() => qmp.execute('cont'));
    }
    await qmp.execute('blockdev-snapshot-sync', {
      device: DISK_DEVICE,
      'snapshot-file': nameInsideQemu(layout.dir, onNewTop.disk),
      format: 'qcow2',
      mode: 'existing',
    });
    discardFiles();
    undo.push(async () => {
      await link(record.disk, snapshotDisk).catch(() => copyFile(record.disk, snapshotDisk));
      await snapshots.retire(snapshot_id);
      await layout.writeRecord({ ...onNewTop, depth: record.depth + 1 });
    });
    await layout.writeRecord(onNewTop);
    await saveMemory(qmp, snapshots.memoryPath(snapshot_id), layout.migrationSocket(), memoryWriter);
    // Migration leaves the disks inactive, and only `cont` re-activates them (QEMU 7.2): a
    // machine that stays paused is left so until resume.
    if (!staysPaused) {
      await qmp.execute('cont');
      continued?.();
    }
  } catch (error) {
    await undo.unwind((failure) => log(`qemu: undoing the failed commit of ${record.vm_id} to ${snapshot_id}: ${failure}`));
    throw error;
  }
}

/** A second snapshot of the same captured state: the first one's immutable files, linked. */
async function copySnapshot({ snapshots, log }: CaptureContext, source: QemuSnapshotRecord, snapshot_id: string): Promise<SnapshotInfo> {
  const from = source.info.snapshot_id;
  const dir = snapshots.dir(snapshot_id);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  await linkOrCopy(snapshots.diskPath(from), snapshots.diskPath(snapshot_id));
  await linkOrCopy(snapshots.memoryPath(from), snapshots.memoryPath(snapshot_id));
  const info: SnapshotInfo = { ...source.info, snapshot_id, created_at: new Date().toISOString(), size_bytes: await allocatedBytes(dir) };
  await snapshots.write({ ...source, info });
  log(`qemu: ${source.info.source_vm_id} committed to ${snapshot_id} (unchanged since ${from})`);
  return info;
}

/** The undos of the steps taken so far; when a later step fails, they run newest first. */
class UndoStack {
  private readonly undos: (() => Promise<unknown>)[] = [];

  /**
   * Registers the undo of a step just taken. The returned function withdraws it: the step was
   * undone on the normal path after all (e.g. `cont` after `stop`), or its undo no longer applies.
   */
  push(undo: () => Promise<unknown>): () => void {
    this.undos.push(undo);
    return () => {
      const at = this.undos.indexOf(undo);
      if (at >= 0) this.undos.splice(at, 1);
    };
  }

  /** Runs every undo, newest first; one that fails is reported and the others still run. */
  async unwind(report: (failure: string) => void): Promise<void> {
    for (const undo of this.undos.splice(0).reverse()) {
      await undo().catch((error: unknown) => report(error instanceof Error ? error.message : String(error)));
    }
  }
}
