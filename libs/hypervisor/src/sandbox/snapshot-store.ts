import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { readJsonFile, renameDurably, syncFileSystem, writeJsonAtomic } from '@arbor/durable-files';
import type { SnapshotInfo } from '../hypervisor-driver.port';
import { withHostLock } from '../host/host-lock';

/**
 * The read-only layers a machine (or a snapshot) sits on, top first: snapshot layer directories by
 * snapshot id, then the image's root filesystem unless a flattened layer already holds it.
 */
export interface LayerChain {
  snapshots: string[];
  base: boolean;
  /** The custom image under the snapshots (absent or null: the built-in base). */
  image_id?: string | null;
}

/** A snapshot on disk: `<snapshotDir>/<id>/layer` (immutable) and `<snapshotDir>/<id>/snapshot.json`. */
export interface StoredSnapshot {
  info: SnapshotInfo;
  image_name: string;
  /** This snapshot's own layer first, then the layers it sits on. */
  chain: LayerChain;
  /**
   * Deleted by the API but its layer still under a later snapshot (or its machines): hidden from
   * get/list/start, removed from disk once nothing sits on it any more.
   */
  deleted?: boolean;
}

/** Snapshots of one host in one directory; writes are serialised by a host-wide lock file. */
export class SnapshotStore {
  constructor(readonly dir: string) {}

  layerDir(snapshotId: string): string {
    return join(this.dir, snapshotId, 'layer');
  }

  /** Where a snapshot is assembled before it is renamed into place (never seen half-written). */
  scratchDir(snapshotId: string): string {
    return join(this.dir, `${snapshotId}.partial`);
  }

  async withLock<T>(work: () => Promise<T>): Promise<T> {
    await mkdir(this.dir, { recursive: true });
    return withHostLock(join(this.dir, '.lock'), work);
  }

  /** The stored snapshot, deleted ones included (callers decide what a tombstone means to them). */
  read(snapshotId: string): Promise<StoredSnapshot | null> {
    return readJsonFile<StoredSnapshot>(this.recordFile(snapshotId));
  }

  async readAll(): Promise<StoredSnapshot[]> {
    const entries = await readdir(this.dir, { withFileTypes: true }).catch(() => []);
    const stored: StoredSnapshot[] = [];
    for (const entry of entries) {
      if (!entry.isDirectory() || entry.name.endsWith('.partial')) continue;
      const snapshot = await this.read(entry.name);
      if (snapshot) stored.push(snapshot);
    }
    return stored;
  }

  /**
   * Moves a complete scratch directory (layer already inside) into place with its metadata, durably:
   * the layer (copied by other processes) is flushed to disk first, then the record, and the rename
   * is fsynced in the snapshot directory, so a snapshot that was acknowledged survives power loss
   * whole, and one cut short stays a `.partial` that is never read.
   */
  async publish(stored: StoredSnapshot): Promise<void> {
    const scratch = this.scratchDir(stored.info.snapshot_id);
    await syncFileSystem(scratch);
    await writeJsonAtomic(join(scratch, 'snapshot.json'), stored);
    await renameDurably(scratch, join(this.dir, stored.info.snapshot_id));
  }

  async markDeleted(stored: StoredSnapshot): Promise<void> {
    await writeJsonAtomic(this.recordFile(stored.info.snapshot_id), { ...stored, deleted: true });
  }

  /** Removes deleted snapshots whose layer no live snapshot and no machine sits on. Call under the lock. */
  async collectGarbage(machineChains: LayerChain[]): Promise<void> {
    const all = await this.readAll();
    const inUse = new Set<string>();
    for (const chain of [...machineChains, ...all.filter((s) => !s.deleted).map((s) => s.chain)]) {
      for (const id of chain.snapshots) inUse.add(id);
    }
    for (const snapshot of all) {
      if (snapshot.deleted && !inUse.has(snapshot.info.snapshot_id)) {
        await rm(join(this.dir, snapshot.info.snapshot_id), { recursive: true, force: true });
      }
    }
  }

  private recordFile(snapshotId: string): string {
    return join(this.dir, snapshotId, 'snapshot.json');
  }
}
