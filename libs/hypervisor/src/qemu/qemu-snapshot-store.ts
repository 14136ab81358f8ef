import { existsSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { readJsonFile, writeFileAtomic, writeJsonAtomic } from '@arbor/durable-files';
import type { SnapshotInfo } from '../hypervisor-driver.port';
import { isSafeId } from '../host/safe-id';
import { backingChain, backingFileOf } from './qcow2-chain';
import type { QemuAccel } from './qemu-command-line';

/** Everything a restore needs besides the files: the machine shape must match the source's. */
export interface QemuSnapshotRecord {
  info: SnapshotInfo;
  accel: QemuAccel;
  env: Record<string, string>;
  /** Snapshot layers from this one's disk down to the base image (1 = backed by the base). */
  depth: number;
  /** The guest's file systems were frozen in the capture (commits before captures stopped freezing them): restored machines thaw them first. */
  frozen: boolean;
  /**
   * The source had a NIC, so machines restored from it get one (their own tap and addresses).
   * Absent in snapshots of machines from before machines had networks: those are not restored.
   */
  nic?: boolean;
  /** The built image the snapshot's disk chain ends in (absent or null: the default image). */
  image_id?: string | null;
  /** The guest kit's disk its source ran with: a restored machine must get the very same one. */
  kit_disk?: string | null;
}

/**
 * `<snapshotDir>/<id>/`: disk.qcow2 (an immutable layer; children's overlays name it as their
 * backing file, so it never moves), memory.bin (the migration stream) and snapshot.json, written
 * last: a directory without it is an unfinished capture. A deleted snapshot whose disk layer
 * still backs other snapshots' layers is `retired`: record and memory gone, layer kept until unused.
 */
export class QemuSnapshotStore {
  constructor(readonly root: string) {}

  dir(id: string): string {
    if (!isSafeId(id)) throw new Error(`invalid snapshot id ${JSON.stringify(id)}`);
    return join(this.root, id);
  }

  diskPath(id: string): string {
    return join(this.dir(id), 'disk.qcow2');
  }

  memoryPath(id: string): string {
    return join(this.dir(id), 'memory.bin');
  }

  async read(id: string): Promise<QemuSnapshotRecord | null> {
    if (!isSafeId(id)) return null;
    return readJsonFile<QemuSnapshotRecord>(join(this.dir(id), 'snapshot.json'));
  }

  async write(record: QemuSnapshotRecord): Promise<void> {
    await writeJsonAtomic(join(this.dir(record.info.snapshot_id), 'snapshot.json'), record);
  }

  async list(): Promise<QemuSnapshotRecord[]> {
    const entries = await readdir(this.root, { withFileTypes: true }).catch(() => []);
    const records = await Promise.all(entries.filter((entry) => entry.isDirectory()).map((entry) => this.read(entry.name)));
    return records.filter((record): record is QemuSnapshotRecord => record !== null);
  }

  /**
   * Deletes a snapshot; refuses while a machine's disk chain runs through its layer (`machineDisks`:
   * the top disk of every machine, by vm id). When only other snapshots' layers sit on it, the
   * snapshot disappears (record and memory) but its disk layer stays, retired, until the last
   * layer above it is deleted. Deleting an unknown snapshot succeeds.
   */
  async delete(id: string, machineDisks: Map<string, string>): Promise<void> {
    if (!(await this.read(id))) return;
    const usedBy = new Map<string, string[]>();
    for (const [vm_id, disk] of machineDisks) {
      for (const file of await backingChain(disk).catch(() => [] as string[])) usedBy.set(file, [...(usedBy.get(file) ?? []), vm_id]);
    }
    const users = usedBy.get(this.diskPath(id)) ?? [];
    if (users.length > 0) throw new Error(`snapshot ${id} is still the base of machine(s) ${users.join(', ')}: destroy them first`);
    await this.retire(id);
    await this.removeUnusedRetired(new Set(usedBy.keys()));
  }

  /**
   * Removes the snapshot's record and memory, keeping its disk layer for the layers above it. The
   * mark goes down durably first: a crash right after must not leave a layer that nothing records.
   */
  async retire(id: string): Promise<void> {
    const dir = this.dir(id);
    await writeFileAtomic(join(dir, 'retired'), '');
    await rm(join(dir, 'snapshot.json'), { force: true });
    await rm(join(dir, 'memory.bin'), { force: true });
  }

  /** Deletes retired layers that neither another snapshot's layer nor a machine (`inUse`) sits on. */
  async removeUnusedRetired(inUse: Set<string>): Promise<void> {
    for (let changed = true; changed; ) {
      changed = false;
      const names = (await readdir(this.root).catch(() => [] as string[])).filter(isSafeId);
      const backings = new Set<string>(inUse);
      for (const name of names) {
        const backing = await backingFileOf(this.diskPath(name)).catch(() => null);
        if (backing) backings.add(backing);
      }
      for (const name of names) {
        if (!existsSync(join(this.dir(name), 'retired')) || backings.has(this.diskPath(name))) continue;
        await rm(this.dir(name), { recursive: true, force: true });
        changed = true;
      }
    }
  }
}
