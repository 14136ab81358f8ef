import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { itUnless } from '../../../test/support/skip-unless';
import { checkDataDirectory, privateStoreFile, UnsafeDataDirectoryError } from './data-directory';

/** Giving a directory to another user (chown) needs root. */
const notRoot = process.getuid?.() === 0 ? null : 'needs root (chown to another user)';

/** The data directory's start check, on the real file system. */
describe('the data directory at start', () => {
  let root: string;
  let count = 0;
  /** A directory path nobody checked yet in this process (the check runs once per directory). */
  const fresh = () => join(root, `data-${++count}`);
  const config = (dataDir: string, floor = 0) => ({ dataDir, resources: { dataDiskFloorMib: floor } });
  const lines = (dataDir: string, floor = 0) => {
    const logged: string[] = [];
    checkDataDirectory(config(dataDir, floor), (line) => logged.push(line));
    return logged;
  };

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'arbor-data-dir-'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('is made 0700 when missing (with its parents), and its mode and free space are logged', () => {
    const dir = join(fresh(), 'nested', 'data');
    const logged = lines(dir, 1);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(logged[0]).toBe(`data directory: ${dir} (made), mode 0700, owner uid ${process.getuid!()}`);
    expect(logged[1]).toMatch(/^data directory: \d+ MiB free, \d+ MiB above the free-space floor of 1 MiB$/);
  });

  it('says when the disk is below the free-space floor, or that there is no floor', () => {
    expect(lines(fresh(), 1024 ** 3)[1]).toMatch(/^data directory: \d+ MiB free, BELOW the free-space floor of 1073741824 MiB: new VMs, branches and commits are refused until space is freed$/);
    expect(lines(fresh(), 0)[1]).toMatch(/^data directory: \d+ MiB free \(no free-space floor: ARBOR_DATA_DISK_FLOOR_MIB is 0\)$/);
  });

  it.each([
    ['0770', 0o770, 'its group'],
    ['0707', 0o707, 'others'],
    ['0777', 0o777, 'its group and others'],
    ['1777', 0o1777, 'its group and others'],
  ])('refuses a directory of mode %s, writable by %s, saying what to do', (_, mode, writers) => {
    const dir = fresh();
    mkdirSync(dir);
    chmodSync(dir, mode);
    const shown = `0${(mode & 0o777).toString(8)}`;
    expect(() => checkDataDirectory(config(dir))).toThrow(
      new UnsafeDataDirectoryError(`the data directory ${dir} is writable by ${writers} (mode ${shown}); whoever may write there can replace the event log or the keys: chmod 0700 ${dir}`),
    );
    // Made private, it is accepted.
    chmodSync(dir, 0o700);
    expect(() => checkDataDirectory(config(dir))).not.toThrow();
  });

  it('accepts a directory only its owner may write, and notes when others may read it', () => {
    const dir = fresh();
    mkdirSync(dir);
    chmodSync(dir, 0o755);
    expect(lines(dir)[0]).toBe(`data directory: ${dir}, mode 0755, owner uid ${process.getuid!()} (readable by group or others: 0700 keeps it to its owner)`);
  });

  it('refuses a file in its place', () => {
    const path = fresh();
    writeFileSync(path, '');
    expect(() => checkDataDirectory(config(path))).toThrow(`the data directory ${path} (ARBOR_DATA_DIR) is not a directory`);
  });

  itUnless(notRoot)('refuses a directory owned by another user (as root: chown)', () => {
    const dir = fresh();
    mkdirSync(dir, { mode: 0o700 });
    chownSync(dir, 4242, 4242);
    expect(() => checkDataDirectory(config(dir))).toThrow(
      `the data directory ${dir} is owned by uid 4242, not by the user Arbor runs as (uid 0); it holds the event log and the keys: chown 0 ${dir}, or run Arbor as its owner`,
    );
  });

  it("makes a store's file 0600 before it is opened, and tightens one an older start left readable, with its -wal and -shm", () => {
    const dir = fresh();
    mkdirSync(dir, { mode: 0o700 });
    const made = privateStoreFile(join(dir, 'new.db'));
    expect(statSync(made).mode & 0o777).toBe(0o600);
    const old = join(dir, 'old.db');
    for (const path of [old, `${old}-wal`, `${old}-shm`]) {
      writeFileSync(path, 'x');
      chmodSync(path, 0o644);
    }
    privateStoreFile(old);
    for (const path of [old, `${old}-wal`, `${old}-shm`]) expect({ path, mode: statSync(path).mode & 0o777 }).toEqual({ path, mode: 0o600 });
  });
});
