import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { HypervisorDriver, MachineSpec } from '../hypervisor-driver.port';
import { descendantsOf, waitUntilGone } from '../testing/host-processes';
import { describeEscapeContract } from '../testing/escape.contract';
import { describeImageContract } from '../testing/image.contract';
import { describeHypervisorDriverContract, machineSpec, snapshotMachineSpec } from '../testing/hypervisor-driver.contract';
import { eventually, existing, stdoutOf } from '../testing/guest-probes';
import { readQemuBaseImage } from './image/qemu-base-image';
import { backingFileOf } from './qcow2-chain';
import { kvmUnavailableReason } from './qemu-accel-probe';
import { MAX_CHAIN_DEPTH } from './machine-capture';
import { QEMU_USER } from './qemu-confinement';
import { QemuDriver, SNAPSHOT_WITHOUT_NIC } from './qemu-driver';
import { QemuMachineLayout } from './qemu-machine-layout';
import { QemuSnapshotStore } from './qemu-snapshot-store';

/**
 * Real QEMU virtual machines on this host (TCG here: /dev/kvm is kvm_pvm and cannot boot a stock
 * kernel). Not skippable: this machine and CI have QEMU, so an unusable QEMU fails the suite with
 * the probe's reason. The base image is built into ARBOR_CACHE_DIR (default /var/cache/arbor) on
 * first use. Boots cost seconds of CPU under TCG, so the qemu-only checks share one machine.
 */
const cacheDir = process.env.ARBOR_CACHE_DIR ?? '/var/cache/arbor';
const scratchDirs: string[] = [];

/**
 * A driver on fresh directories. The state directory sits in a 0700 one, as in a data directory
 * kept private: QEMU, once unprivileged and chrooted into its machine's directory, walks none of it.
 */
async function newDriver(dirs?: { stateDir: string; snapshotDir: string }) {
  const stateDir = dirs?.stateDir ?? join(await mkdtemp(join(tmpdir(), 'arbor-qemu-data-')), 'machines');
  const snapshotDir = dirs?.snapshotDir ?? (await mkdtemp(join(tmpdir(), 'arbor-qemu-snap-')));
  const imageDir = join(dirname(stateDir), 'images');
  scratchDirs.push(dirname(stateDir), snapshotDir);
  const driver = new QemuDriver({ stateDir, snapshotDir, imageDir, cacheDir, log: (line) => process.stdout.write(`${line}\n`) });
  const probe = await driver.probe();
  if (!probe.ok) throw new Error(`QEMU driver unusable on this host (the suite must run here): ${probe.reason}`);
  return { driver, stateDir, snapshotDir };
}

afterAll(async () => {
  for (const dir of scratchDirs) await rm(dir, { recursive: true, force: true });
});

/**
 * What a machine holds on the host: its QEMU (a direct child of this process), anything QEMU
 * started (e.g. the `cat` of a memory snapshot), and its state directory. The check asserts that
 * all of it is gone, the QEMU reaped rather than left a zombie.
 */
async function footprint(stateDir: string, vmId: string): Promise<() => Promise<void>> {
  const dir = join(stateDir, vmId);
  const qemuPid = (await new QemuMachineLayout(stateDir, vmId).readRecord())!.process.pid;
  const processes = [qemuPid, ...descendantsOf(qemuPid)];
  return async () => {
    expect(await waitUntilGone(processes)).toEqual([]);
    expect(existsSync(`/proc/${qemuPid}`)).toBe(false);
    expect(existsSync(dir)).toBe(false);
  };
}

/** The guest sees the vCPUs and (less what its kernel keeps) the memory of its spec. */
async function expectGuestShape(driver: HypervisorDriver, vmId: string, spec: MachineSpec): Promise<void> {
  const [nproc, memTotal] = (await stdoutOf(driver, vmId, { argv: ['sh', '-c', 'nproc; grep MemTotal /proc/meminfo'] })).split('\n');
  expect(Number(nproc)).toBe(spec.vcpu_count);
  const memMib = Number(/(\d+) kB/.exec(memTotal)?.[1]) / 1024;
  expect(memMib).toBeLessThanOrEqual(spec.mem_size_mib);
  expect(memMib).toBeGreaterThanOrEqual(spec.mem_size_mib * 0.75);
}

/** What the flattening test writes in generation `n`: 1 MiB, different for every generation. */
const generationContent = (n: number) => Buffer.alloc(1 << 20, `generation ${n} `);

describeEscapeContract(
  'qemu',
  async () => (await newDriver()).driver,
  { boundary: 'hardware' },
);

let contractStateDir: string;
describeHypervisorDriverContract(
  'qemu',
  async () => {
    const { driver, stateDir } = await newDriver();
    contractStateDir = stateDir;
    return driver;
  },
  { footprint: (vmId) => footprint(contractStateDir, vmId), expectShape: expectGuestShape },
);

describeImageContract('qemu', async () => (await newDriver()).driver, cacheDir);

describe('QemuDriver (qemu only)', () => {
  let driver: QemuDriver;
  let dirs: { stateDir: string; snapshotDir: string };
  const source = machineSpec();
  const machines: string[] = [];
  const snapshots: string[] = [];

  beforeAll(async () => {
    ({ driver, ...dirs } = await newDriver());
    await driver.prepare();
    await driver.create(source);
    machines.push(source.vm_id);
  }, 10 * 60_000);

  afterAll(async () => {
    for (const vmId of machines) await driver?.destroy(vmId);
    for (const id of snapshots.reverse()) await driver?.deleteSnapshot(id).catch(() => undefined);
  }, 5 * 60_000);

  it('says which accelerator it uses and why', async () => {
    const probe = await driver.probe();
    expect(probe.ok).toBe(true);
    expect(probe.reason).toMatch(/^(KVM|TCG)/);
  });

  // Where the host itself shows that KVM cannot work (here: kvm_pvm, no vmx/svm), HYPERVISOR=auto
  // learns it at once; elsewhere the probe builds the image and boots (the test above).
  const kvmRuledOut = kvmUnavailableReason();
  const hostAloneTitle = 'answers its probe from the host alone, without a base image, where KVM cannot work';
  (kvmRuledOut ? it : it.skip)(kvmRuledOut ? hostAloneTitle : `${hostAloneTitle} — skipped: KVM may work on this host, so its probe boots a VM (tested above)`, async () => {
    const emptyCache = await mkdtemp(join(tmpdir(), 'arbor-qemu-cache-'));
    scratchDirs.push(emptyCache);
    const fresh = new QemuDriver({ stateDir: join(emptyCache, 'state'), snapshotDir: join(emptyCache, 'snap'), cacheDir: emptyCache });
    expect(await fresh.probe()).toEqual({ ok: true, recommended: false, reason: expect.stringContaining(kvmRuledOut!) });
    // Nothing built, nothing booted.
    expect(await readdir(emptyCache)).toEqual([]);
  });

  it('runs QEMU as its own unprivileged user, chrooted in its machine directory, under its seccomp sandbox', async () => {
    const pid = (await driver.list()).find((m) => m.vm_id === source.vm_id)!.pid!;
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const ids = `${QEMU_USER.uid}\t${QEMU_USER.uid}\t${QEMU_USER.uid}\t${QEMU_USER.uid}`;
    expect(status).toMatch(new RegExp(`^Uid:\\t${ids}$`, 'm'));
    expect(status).toMatch(/^CapEff:\t0+$/m);
    expect(status).toMatch(/^NoNewPrivs:\t1$/m);
    expect(status).toMatch(/^Seccomp:\t2$/m);
    // Its file system is its machine's directory and nothing else.
    expect(readlinkSync(`/proc/${pid}/root`)).toBe(join(dirs.stateDir, source.vm_id));
    for (const dir of [dirs.stateDir, join(dirs.stateDir, source.vm_id)]) {
      expect(statSync(dir).mode & 0o777).toBe(0o700);
      expect(statSync(dir).uid).toBe(QEMU_USER.uid);
    }
  });

  it('runs QEMU as a direct child of this process and records it for re-attachment', async () => {
    const [info] = (await driver.list()).filter((m) => m.vm_id === source.vm_id);
    expect(info).toMatchObject({ state: 'running' });
    const stat = readFileSync(`/proc/${info.pid}/stat`, 'utf8');
    expect(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])).toBe(process.pid);

    // A second driver on the same directories (a restarted worker) finds and drives the machine.
    await driver.close();
    const { driver: restarted } = await newDriver(dirs);
    expect(await restarted.list()).toEqual([expect.objectContaining({ vm_id: source.vm_id, state: 'running', pid: info.pid })]);
    expect(await stdoutOf(restarted, source.vm_id, { argv: ['cat', '/etc/hostname'] })).toBe(`${source.identity.hostname}\n`);
    await restarted.close();
  }, 120_000);

  it('refuses, saying why and making nothing, to restore a snapshot of a machine from before machines had networks (no NIC)', async () => {
    // Such a snapshot's record says nothing of a NIC: its machine had none, and its memory restores only into one alike.
    const snapshot_id = `pre-network-${source.vm_id}`;
    const store = new QemuSnapshotStore(dirs.snapshotDir);
    await mkdir(store.dir(snapshot_id), { recursive: true });
    const info = { snapshot_id, source_vm_id: source.vm_id, includes_memory: true, vcpu_count: 1, mem_size_mib: 256, fs_size_mib: 1024, created_at: new Date().toISOString() };
    await store.write({ info, accel: 'tcg', env: {}, depth: 1, frozen: true });
    const child = snapshotMachineSpec();

    await expect(driver.startFromSnapshot(snapshot_id, child)).rejects.toThrow(SNAPSHOT_WITHOUT_NIC(snapshot_id));
    expect(SNAPSHOT_WITHOUT_NIC(snapshot_id)).toMatch(/no network card, so a VM restored from it would have no address, SSH or edge route/);
    expect(await driver.status(child.vm_id)).toBeNull();
    expect(await driver.addresses(child.vm_id)).toBeNull();
    expect(existsSync(join(dirs.stateDir, child.vm_id))).toBe(false);
    await rm(store.dir(snapshot_id), { recursive: true, force: true });
  });

  it('keeps a running process, its PID and its memory-only state in a machine started from a memory snapshot', async () => {
    // The count lives in a shell variable and a tmpfs file: only a memory snapshot can carry it.
    const loop = 'i=0; while :; do i=$((i+1)); echo $i > /run/count; sleep 0.05; done';
    const pid = Number(
      (await stdoutOf(driver, source.vm_id, { argv: ['sh', '-c', `(${loop}) </dev/null >/dev/null 2>&1 & echo $!`] })).trim(),
    );
    const readCount = (vmId: string) => stdoutOf(driver, vmId, { argv: ['cat', '/run/count'] }).then(Number);
    const before = await eventually(() => readCount(source.vm_id), (n) => n >= 5);

    const snapshotId = `mem-${source.vm_id}`;
    const child = snapshotMachineSpec();
    await driver.commit(source.vm_id, snapshotId);
    snapshots.push(snapshotId);
    await driver.startFromSnapshot(snapshotId, child);
    machines.push(child.vm_id);

    expect(await stdoutOf(driver, child.vm_id, { argv: ['sh', '-c', `cat /proc/${pid}/cmdline | tr '\\0' ' '`] })).toContain(loop);
    const first = await readCount(child.vm_id);
    expect(first).toBeGreaterThanOrEqual(before);
    await eventually(() => readCount(child.vm_id), (n) => n > first);
  }, 5 * 60_000);

  it(`flattens a snapshot's layer onto the base image once the chain would pass ${MAX_CHAIN_DEPTH} layers`, async () => {
    const image = await readQemuBaseImage(cacheDir);
    const chain: { id: string; backing: string | null }[] = [];
    for (let generation = 1; generation <= MAX_CHAIN_DEPTH + 1; generation++) {
      // 1 MiB each: its data fills qcow2 clusters of its own, which only its layer holds.
      await driver.writeFile(source.vm_id, `/root/generation-${generation}`, generationContent(generation));
      const id = `chain-${generation}-${source.vm_id}`;
      await driver.commit(source.vm_id, id);
      snapshots.push(id);
      chain.push({ id, backing: await backingFileOf(join(dirs.snapshotDir, id, 'disk.qcow2')) });
      if (chain[chain.length - 1].backing === image!.disk) break;
    }
    const flat = chain[chain.length - 1];
    expect(flat.backing).toBe(image!.disk);
    // Before the flattening, each layer sat on the previous snapshot's (the source started at depth 1).
    expect(chain.length).toBe(MAX_CHAIN_DEPTH);
    for (let i = 1; i < chain.length - 1; i++) expect(chain[i].backing).toBe(join(dirs.snapshotDir, chain[i - 1].id, 'disk.qcow2'));

    const child = snapshotMachineSpec();
    await driver.startFromSnapshot(flat.id, child);
    machines.push(child.vm_id);
    const expected = chain.map((_, i) => `/root/generation-${i + 1}`);
    expect(await existing(driver, child.vm_id, expected)).toEqual(expected);
    // From the disk, not the page cache the memory snapshot brought: every layer's data is in the flat one.
    const sums = await stdoutOf(driver, child.vm_id, { argv: ['sh', '-c', 'sync; echo 3 > /proc/sys/vm/drop_caches && sha256sum "$@"', 'sh', ...expected] });
    expect(sums.split('\n').filter(Boolean).map((line) => line.split(' ')[0])).toEqual(
      chain.map((_, i) => createHash('sha256').update(generationContent(i + 1)).digest('hex')),
    );
  }, 10 * 60_000);

  it('keeps snapshots root-only and their layers sealed: QEMU never writes a layer once captured', async () => {
    const id = `sealed-${source.vm_id}`;
    await driver.commit(source.vm_id, id);
    snapshots.push(id);
    expect(statSync(dirs.snapshotDir).mode & 0o777).toBe(0o700);
    expect(statSync(dirs.snapshotDir).uid).toBe(0);
    const layer = statSync(join(dirs.snapshotDir, id, 'disk.qcow2'));
    expect({ uid: layer.uid, mode: layer.mode & 0o777 }).toEqual({ uid: 0, mode: 0o444 });
    expect(statSync(join(dirs.snapshotDir, id, 'memory.bin')).mode & 0o777).toBe(0o600);
  }, 5 * 60_000);

  it('destroys a paused, committed machine completely, leaving its snapshots whole and usable', async () => {
    await driver.writeFile(source.vm_id, '/root/before-pause', Buffer.from('kept'));
    await driver.pause(source.vm_id);
    const [first, second] = [`paused-${source.vm_id}`, `paused-again-${source.vm_id}`];
    for (const id of [first, second]) {
      await driver.commit(source.vm_id, id);
      snapshots.push(id);
    }
    expect(await driver.status(source.vm_id)).toBe('paused');
    const gone = await footprint(dirs.stateDir, source.vm_id);

    await driver.destroy(source.vm_id);

    await gone();
    expect(await driver.status(source.vm_id)).toBeNull();
    for (const id of [first, second]) {
      expect(await driver.getSnapshot(id)).toMatchObject({ snapshot_id: id, source_vm_id: source.vm_id });
      for (const file of ['disk.qcow2', 'memory.bin', 'snapshot.json']) expect(existsSync(join(dirs.snapshotDir, id, file))).toBe(true);
    }
    const child = snapshotMachineSpec();
    await driver.startFromSnapshot(second, child);
    machines.push(child.vm_id);
    expect((await driver.readFile(child.vm_id, '/root/before-pause')).toString()).toBe('kept');
  }, 5 * 60_000);
});
