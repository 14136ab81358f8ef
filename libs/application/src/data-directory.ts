import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statfsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ArborConfig } from './arbor-config';

const MIB = 1024 * 1024;

/** Directories already checked by this process: the check is the start's, not every store's open. */
const checked = new Set<string>();

/** The data directory is not one Arbor may trust: the start is refused with what to do. */
export class UnsafeDataDirectoryError extends Error {}

/**
 * The data directory (`ARBOR_DATA_DIR`) holds the event log, the read models, the admin key, the
 * secrets key and the key store, the worker's checkpoint and the machines: whoever may write there
 * owns the installation. At start it is made 0700 when missing; an existing one must be a
 * directory owned by the user Arbor runs as and writable by nobody else (group or others), or the
 * start is refused saying what to change. Its mode, owner and free space (against the free-space
 * floor, `ARBOR_DATA_DISK_FLOOR_MIB`) are logged once per process.
 */
export function checkDataDirectory(config: Pick<ArborConfig, 'dataDir'> & { resources: { dataDiskFloorMib: number } }, log: (line: string) => void = () => {}): void {
  const dir = resolve(config.dataDir);
  if (checked.has(dir)) return;
  const made = !existsSync(dir);
  if (made) mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stats = statSync(dir);
  if (!stats.isDirectory()) throw new UnsafeDataDirectoryError(`the data directory ${dir} (ARBOR_DATA_DIR) is not a directory`);
  const uid = process.getuid?.();
  if (uid !== undefined && stats.uid !== uid) {
    throw new UnsafeDataDirectoryError(
      `the data directory ${dir} is owned by uid ${stats.uid}, not by the user Arbor runs as (uid ${uid}); it holds the event log and the keys: chown ${uid} ${dir}, or run Arbor as its owner`,
    );
  }
  const mode = stats.mode & 0o777;
  const writers = [mode & 0o020 ? 'its group' : null, mode & 0o002 ? 'others' : null].filter(Boolean);
  if (writers.length > 0) {
    throw new UnsafeDataDirectoryError(
      `the data directory ${dir} is writable by ${writers.join(' and ')} (mode ${octal(mode)}); whoever may write there can replace the event log or the keys: chmod 0700 ${dir}`,
    );
  }
  checked.add(dir);
  log(`data directory: ${dir}${made ? ' (made)' : ''}, mode ${octal(mode)}, owner uid ${stats.uid}${mode & 0o044 ? ' (readable by group or others: 0700 keeps it to its owner)' : ''}`);
  log(`data directory: ${freeSpaceLine(dir, config.resources.dataDiskFloorMib)}`);
}

/**
 * A store's file in the data directory, private to its owner (0600): made so before SQLite opens
 * it (its -wal and -shm files take the database's mode), and tightened with its -wal and -shm
 * files when an older start left them readable by others.
 */
export function privateStoreFile(file: string): string {
  if (!existsSync(file)) closeSync(openSync(file, 'a', 0o600));
  for (const path of [file, `${file}-wal`, `${file}-shm`]) {
    if (existsSync(path) && (statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
  }
  return file;
}

function freeSpaceLine(dir: string, floorMib: number): string {
  const stats = statfsSync(dir);
  const free = Math.floor((Number(stats.bavail) * Number(stats.bsize)) / MIB);
  if (floorMib <= 0) return `${free} MiB free (no free-space floor: ARBOR_DATA_DISK_FLOOR_MIB is 0)`;
  if (free < floorMib) return `${free} MiB free, BELOW the free-space floor of ${floorMib} MiB: new VMs, branches and commits are refused until space is freed`;
  return `${free} MiB free, ${free - floorMib} MiB above the free-space floor of ${floorMib} MiB`;
}

const octal = (mode: number) => `0${mode.toString(8).padStart(3, '0')}`;
