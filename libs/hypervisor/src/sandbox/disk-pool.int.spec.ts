import { existsSync, readdirSync, readFileSync, renameSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execCollect, machineSpec, snapshotMachineSpec } from '../testing/hypervisor-driver.contract';
import { rootFsSizeMib } from '../testing/guest-probes';
import { loopDevicesUnder } from '../testing/host-processes';
import { SandboxDriver } from './sandbox-driver';
import { describeUnless, rootReason } from '../../../../test/support/skip-unless';

/** Spare disks through the driver interface, on the real host (loop devices, btrfs, mounts: root). */
const cacheDir = process.env.ARBOR_CACHE_DIR ?? '/var/cache/arbor';
const describeAsRoot = describeUnless(rootReason);

const SIZE_MIB = 512;
const scratchDirs: string[] = [];
const drivers: SandboxDriver[] = [];

async function newDriver(stateDir?: string, snapshotDir?: string): Promise<{ driver: SandboxDriver; stateDir: string; snapshotDir: string }> {
  const dirs = { stateDir: stateDir ?? join(await scratch(), 'machines'), snapshotDir: snapshotDir ?? (await scratch()) };
  const driver = new SandboxDriver({ ...dirs, cacheDir, spareDisks: 2, warmPool: { size: 0, shape: { vcpu_count: 1, mem_size_mib: 200, fs_size_mib: SIZE_MIB } } });
  drivers.push(driver);
  return { driver, ...dirs };
}

async function scratch(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'arbor-disk-pool-'));
  scratchDirs.push(dir);
  return dir;
}

/** The loop device the file system mounted at `point` comes from. */
function deviceMountedAt(point: string): string | undefined {
  return readFileSync('/proc/mounts', 'utf8')
    .split('\n')
    .map((line) => line.split(' '))
    .find((fields) => fields[1] === point)?.[0];
}

const spareIds = (stateDir: string) => readdirSync(join(stateDir, '.disks'));

describeAsRoot('SandboxDriver spare disks', () => {
  let driver: SandboxDriver;
  let stateDir: string;
  let snapshotDir: string;
  const shape = { vcpu_count: 1, mem_size_mib: 200, fs_size_mib: SIZE_MIB };

  beforeAll(async () => {
    ({ driver, stateDir, snapshotDir } = await newDriver());
    await driver.prepare();
    await driver.spareDisksFull();
  }, 15 * 60_000);

  afterAll(async () => {
    for (const each of drivers) {
      for (const machine of await each.list().catch(() => [])) await each.destroy(machine.vm_id).catch(() => undefined);
      await each.close();
    }
    for (const dir of scratchDirs) await rm(dir, { recursive: true, force: true });
  }, 5 * 60_000);

  it("gives a cold machine a waiting disk, of its size and its own, and the pool fills again", async () => {
    const spares = spareIds(stateDir);
    expect(spares).toHaveLength(2);
    const spareDevices = spares.map((id) => deviceMountedAt(join(stateDir, '.disks', id, 'disk')));
    expect(spareDevices.every((device) => device?.startsWith('/dev/loop'))).toBe(true);

    const source = machineSpec(shape);
    await driver.create(source); // no warm pool: a cold create, which claims a spare
    await execCollect(driver, source.vm_id, { argv: ['sh', '-c', 'echo source-only > /root/mine'] });
    await driver.commit(source.vm_id, `spare-${source.vm_id}`);
    const child = snapshotMachineSpec();
    await driver.startFromSnapshot(`spare-${source.vm_id}`, child); // the branch child claims the other

    const devices = [source.vm_id, child.vm_id].map((vmId) => deviceMountedAt(join(stateDir, vmId, 'disk')));
    expect([...devices].sort()).toEqual([...spareDevices].sort());
    expect(spareIds(stateDir).filter((id) => spares.includes(id))).toEqual([]);
    for (const vmId of [source.vm_id, child.vm_id]) {
      // Its disk's size (what `df /` shows in the machine) is the one asked for, and its directory is private.
      const size = await rootFsSizeMib(driver, vmId);
      expect(size).toBeGreaterThanOrEqual(SIZE_MIB * 0.75);
      expect(size).toBeLessThanOrEqual(SIZE_MIB);
      expect(statSync(join(stateDir, vmId)).mode & 0o777).toBe(0o700);
      expect(statSync(join(stateDir, vmId, 'disk')).mode & 0o777).toBe(0o700);
    }
    // The child's disk holds its own writes only: the source's file comes from the snapshot layer.
    await execCollect(driver, child.vm_id, { argv: ['sh', '-c', 'echo child-only > /root/theirs'] });
    expect(existsSync(join(stateDir, child.vm_id, 'disk/upper/root/mine'))).toBe(false);
    expect(existsSync(join(stateDir, source.vm_id, 'disk/upper/root/theirs'))).toBe(false);
    expect((await execCollect(driver, child.vm_id, { argv: ['cat', '/root/mine'] })).stdout.toString()).toBe('source-only\n');
    // A claimed disk grows like any other.
    await driver.resizeDisk(child.vm_id, SIZE_MIB + 256);
    expect(await rootFsSizeMib(driver, child.vm_id)).toBeGreaterThan(SIZE_MIB);

    await driver.spareDisksFull();
    expect(spareIds(stateDir)).toHaveLength(2);

    for (const vmId of [child.vm_id, source.vm_id]) await driver.destroy(vmId);
    await driver.deleteSnapshot(`spare-${source.vm_id}`);
    await driver.reaped();
    for (const vmId of [child.vm_id, source.vm_id]) {
      expect(existsSync(join(stateDir, vmId))).toBe(false);
      expect(loopDevicesUnder(join(stateDir, vmId))).toEqual([]);
    }
    for (const device of devices) expect(readFileSync('/proc/mounts', 'utf8')).not.toContain(`${device} `);
  }, 5 * 60_000);

  it('makes a disk of another size itself, and turns the pool to that size', async () => {
    await driver.spareDisksFull();
    const spares = spareIds(stateDir);
    const bigger = machineSpec({ ...shape, fs_size_mib: 600 });
    await driver.create(bigger);
    const device = deviceMountedAt(join(stateDir, bigger.vm_id, 'disk'));
    expect(spares.map((id) => deviceMountedAt(join(stateDir, '.disks', id, 'disk')))).not.toContain(device);
    expect(await rootFsSizeMib(driver, bigger.vm_id)).toBeGreaterThan(SIZE_MIB);
    await driver.spareDisksFull();
    const sizes = spareIds(stateDir).map((id) => statSync(join(stateDir, '.disks', id, 'disk.img')).size / 2 ** 20);
    expect(sizes).toEqual([600, 600]);
    await driver.destroy(bigger.vm_id);
  }, 5 * 60_000);

  it('tears down a machine whose claim a crash cut short (its disk moved in, no record written)', async () => {
    await driver.spareDisksFull();
    const [spare] = spareIds(stateDir);
    // What a crash between the claim's rename and its record leaves: a machine directory with a mounted disk.
    const vmId = machineSpec().vm_id;
    renameSync(join(stateDir, '.disks', spare), join(stateDir, vmId));
    expect(await driver.status(vmId)).toBe('dead');
    await driver.destroy(vmId);
    await driver.reaped();
    expect(existsSync(join(stateDir, vmId))).toBe(false);
    expect(loopDevicesUnder(join(stateDir, vmId))).toEqual([]);
    expect(readFileSync('/proc/mounts', 'utf8')).not.toContain(join(stateDir, vmId));
  }, 5 * 60_000);

  it("removes an earlier run's spares at start (never adopted), and leaves none behind once closed", async () => {
    await driver.spareDisksFull();
    const before = spareIds(stateDir);
    expect(before.length).toBeGreaterThan(0);
    // A restarted worker on the same state directory, its predecessor gone without closing.
    const { driver: restarted } = await newDriver(stateDir, snapshotDir);
    await restarted.prepare();
    await restarted.spareDisksFull();
    const after = spareIds(stateDir);
    expect(after).toHaveLength(2);
    expect(after.filter((id) => before.includes(id))).toEqual([]);
    const mounts = readFileSync('/proc/mounts', 'utf8');
    for (const id of before) expect(mounts).not.toContain(join(stateDir, '.disks', id));
    expect(loopDevicesUnder(join(stateDir, '.disks'))).toHaveLength(2);

    await restarted.close();
    expect(spareIds(stateDir)).toEqual([]);
    expect(loopDevicesUnder(stateDir)).toEqual([]);
    expect(readFileSync('/proc/mounts', 'utf8')).not.toContain(stateDir);
  }, 10 * 60_000);
});
