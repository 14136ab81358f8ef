import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { HypervisorDriver, MachineInfo, MachineSpec } from '../hypervisor-driver.port';
import { loopDevicesUnder, waitUntilGone } from '../testing/host-processes';
import { describeEscapeContract, makeHostSecret } from '../testing/escape.contract';
import { identityOf } from '../testing/guest-probes';
import { busyboxRoot } from '../images/sample-roots';
import { clientKey, describeImageContract, overSsh } from '../testing/image.contract';
import {
  describeHypervisorDriverContract,
  execCollect,
  machineSpec,
  snapshotMachineSpec,
} from '../testing/hypervisor-driver.contract';
import { baseRootfsPath } from './base-rootfs';
import { isUnified } from './cgroup-probe';
import { kitLayerPath } from './kit-layer';
import { GUEST_IDS } from './guest-ids';
import { machineCgroupDirs, machineCgroupPids } from './machine-cgroup-dirs';
import { MACHINE_ROOTS_DIR, runtimeOf, type MachineRecord } from './machine-layout';
import { runtimeUnder, type OciRuntime } from './oci-runtime';
import { MAX_SNAPSHOT_LAYERS, SandboxDriver } from './sandbox-driver';
import { SECCOMP_PROGRAM_ANNOTATION } from './seccomp-programs';
import type { OciRuntimeSetting } from './runtime-choice';
import type { WarmPoolOptions } from './warm-pool';
import { describeUnless, itUnless, rootReason } from '../../../../test/support/skip-unless';
import { indexOfCall, traceFileSyscalls } from '../../../../test/support/syscall-trace';

/**
 * Runs against the real host: namespaces, overlayfs and cgroup v1 need root. The base root filesystem
 * is built by debootstrap into the host cache on first use; without network to the Debian mirror
 * `prepare()` rejects and every test fails with debootstrap's output.
 */
const cacheDir = process.env.ARBOR_CACHE_DIR ?? '/var/cache/arbor';
const describeAsRoot = describeUnless(rootReason);
const itWithCrun = itUnless(existsSync('/usr/bin/crun') ? null : 'crun is not installed (machines run under runc, which takes no compiled seccomp program)');

const stateDirs: string[] = [];
async function newStateDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'arbor-sandbox-'));
  stateDirs.push(dir);
  return dir;
}
const drivers: SandboxDriver[] = [];
afterAll(async () => {
  // A destroyed machine's disk is unmounted by its driver's reaper, behind destroy's answer.
  for (const driver of drivers) await driver.reaped();
  for (const dir of stateDirs) await rm(dir, { recursive: true, force: true });
});

/**
 * A driver on fresh state and snapshot directories (the base root filesystem is shared). The state
 * directory sits in a 0700 one, as in a data directory kept private: the runtime, mounting a
 * machine's root as guest root, walks none of it.
 */
async function newDriver(
  log?: (line: string) => void,
  warmPool?: WarmPoolOptions,
  spareDisks?: number,
  runtime?: OciRuntimeSetting,
): Promise<{ driver: SandboxDriver; stateDir: string; snapshotDir: string; imageDir: string }> {
  const stateDir = join(await newStateDir(), 'machines');
  const snapshotDir = await newStateDir();
  const imageDir = join(await newStateDir(), 'images');
  const driver = new SandboxDriver({ stateDir, snapshotDir, imageDir, cacheDir, log, warmPool, spareDisks, runtime });
  drivers.push(driver);
  return { driver, stateDir, snapshotDir, imageDir };
}

/** The shape of the contract's machines (machineSpec's defaults): the warm pool's, so that its creates are claims. */
const CONTRACT_SHAPE = { vcpu_count: 1, mem_size_mib: 256, fs_size_mib: 1024 };

/** The lowerdir layers of the overlay mounted at `merged`, from /proc/mounts. */
function overlayLowerDirs(merged: string): string[] {
  const line = readFileSync('/proc/mounts', 'utf8')
    .split('\n')
    .find((entry) => entry.split(' ')[1] === merged);
  const lowerdir = /(?:^|,)lowerdir=([^,]*)/.exec(line?.split(' ')[3] ?? '')?.[1];
  if (!lowerdir) throw new Error(`no overlay mounted at ${merged}`);
  return lowerdir.split(':');
}

function recordOf(stateDir: string, vmId: string): MachineRecord {
  return JSON.parse(readFileSync(join(stateDir, vmId, 'machine.json'), 'utf8')) as MachineRecord;
}

/** The id a machine runs under: its vm id, or the id of the warm machine it was claimed from. */
function containerIdOf(stateDir: string, vmId: string): string {
  return recordOf(stateDir, vmId).container ?? vmId;
}

/** The OCI runtime a machine's container runs under, as its record names it. */
function runtimeOfMachine(stateDir: string, vmId: string): OciRuntime {
  return runtimeUnder(stateDir, runtimeOf(recordOf(stateDir, vmId)));
}

/** Loop devices (by name) whose backing file is the disk image of machine `vmId`, wherever its directory went. */
function loopDevicesOfMachine(vmId: string): string[] {
  return readdirSync('/sys/block')
    .filter((name) => name.startsWith('loop'))
    .filter((name) => {
      try {
        return readFileSync(`/sys/block/${name}/loop/backing_file`, 'utf8').trim().endsWith(`/${vmId}/disk.img`);
      } catch {
        return false; // not attached
      }
    });
}

/**
 * What a machine holds on the host; the check asserts that none of it is left once `driver` has
 * destroyed it and taken down what it left (destroy returns once the machine is stopped, its
 * network gone and its directory handed to the reaper).
 */
async function footprint(driver: SandboxDriver, stateDir: string, vmId: string): Promise<() => Promise<void>> {
  const container = containerIdOf(stateDir, vmId);
  // The machine's cgroups, in whichever hierarchy (v1 or v2) this host runs.
  const cgroupDirs = machineCgroupDirs(container);
  // Its init and everything started in it.
  const members = await machineCgroupPids(container);
  expect(members.length).toBeGreaterThan(0);
  const machineDir = join(stateDir, vmId);
  const root = join(MACHINE_ROOTS_DIR, container);
  return async () => {
    expect(existsSync(machineDir)).toBe(false); // at once: no list or status sees it
    await driver.reaped();
    expect(loopDevicesOfMachine(vmId)).toEqual([]);
    expect(readdirSync(join(stateDir, '.reap')).filter((name) => name === vmId)).toEqual([]);
    expect(readFileSync('/proc/mounts', 'utf8')).not.toContain(root);
    expect(existsSync(root)).toBe(false);
    expect(await waitUntilGone(members)).toEqual([]);
    expect(loopDevicesUnder(machineDir)).toEqual([]);
    expect(readFileSync('/proc/mounts', 'utf8')).not.toContain(machineDir);
    expect(cgroupDirs.filter((dir) => existsSync(dir))).toEqual([]);
    expect(existsSync(machineDir)).toBe(false);
  };
}

/**
 * The sandbox's vCPUs and memory are cgroup limits, not what the machine sees (nproc and
 * /proc/meminfo are the host's): the memory limit must bite. A process allocating well past it is
 * OOM-killed, and the machine runs on.
 */
async function expectLimitsBite(driver: HypervisorDriver, vmId: string, spec: MachineSpec): Promise<void> {
  const hog = `$x = "x" x (${spec.mem_size_mib + 256} * 1024 * 1024); print "survived\n"`;
  const result = await execCollect(driver, vmId, { argv: ['perl', '-e', hog] });
  expect(result.exit_code).toBe(137); // SIGKILL from the OOM killer
  expect(result.stdout.toString()).toBe('');
  expect(await driver.status(vmId)).toBe('running');
  expect((await execCollect(driver, vmId, { argv: ['echo', 'still here'] })).stdout.toString()).toBe('still here\n');
}

describeAsRoot('SandboxDriver', () => {
  let contractStateDir: string;
  let contractDriver: SandboxDriver;
  describeHypervisorDriverContract(
    'sandbox',
    async () => {
      const { driver, stateDir } = await newDriver();
      contractStateDir = stateDir;
      contractDriver = driver;
      return driver;
    },
    { footprint: (vmId) => footprint(contractDriver, contractStateDir, vmId), expectShape: expectLimitsBite },
  );

  // The same contract, each create claiming a machine of a warm pool (of the contract's shape), and
  // machines made cold (branch children, creates the pool cannot serve) claiming spare disks.
  let warmStateDir: string;
  let warmDriver: SandboxDriver | undefined;
  describeHypervisorDriverContract(
    'sandbox, machines claimed from a warm pool, cold ones on spare disks',
    async () => {
      const { driver, stateDir } = await newDriver(undefined, { size: 2, shape: CONTRACT_SHAPE }, 2);
      warmStateDir = stateDir;
      warmDriver = driver;
      return driver;
    },
    { footprint: (vmId) => footprint(warmDriver!, warmStateDir, vmId), expectShape: expectLimitsBite },
  );
  afterAll(async () => warmDriver?.close());

  describeImageContract('sandbox', async () => (await newDriver()).driver, cacheDir);

  let escapeStateDir: string;
  describeEscapeContract(
    'sandbox',
    async () => {
      const { driver, stateDir } = await newDriver();
      escapeStateDir = stateDir;
      return driver;
    },
    { boundary: 'shared-kernel', hostPathOf: (vmId, guestPath) => join(escapeStateDir, vmId, 'disk/upper', guestPath) },
  );

  describe('on this host', () => {
    let stateDir: string;
    let snapshotDir: string;
    let driver: SandboxDriver;
    let info: MachineInfo;
    const spec = machineSpec({ vcpu_count: 2, mem_size_mib: 300, env: { ROLE: 'sandbox-test' } });

    beforeAll(async () => {
      ({ driver, stateDir, snapshotDir } = await newDriver((line) => console.log(line)));
      await driver.prepare();
      info = await driver.create(spec);
    }, 15 * 60_000);

    afterAll(async () => {
      for (const machine of (await driver?.list()) ?? []) await driver.destroy(machine.vm_id);
    });

    it('runs the machine in its own user, mount, PID, UTS, IPC and cgroup namespaces, with the init as PID 1', async () => {
      expect(info.pid).toBeGreaterThan(1);
      for (const ns of ['user', 'mnt', 'pid', 'uts', 'ipc', 'cgroup']) {
        expect(readlinkSync(`/proc/${info.pid}/ns/${ns}`)).not.toBe(readlinkSync(`/proc/self/ns/${ns}`));
      }
      const hostView = readFileSync(`/proc/${info.pid}/stat`, 'utf8');
      const machineView = (await execCollect(driver, spec.vm_id, { argv: ['cat', '/proc/1/stat'] })).stdout.toString();
      const startTime = (stat: string) => stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
      expect(startTime(machineView)).toBe(startTime(hostView));
      expect((await execCollect(driver, spec.vm_id, { argv: ['uname', '-n'] })).stdout.toString()).toBe(
        `${spec.identity.hostname}\n`,
      );
    });

    it('maps guest root onto the unprivileged host id range, with the confinement of a container', async () => {
      const mapping = `0 ${GUEST_IDS.hostFirst} ${GUEST_IDS.count}`;
      expect(readFileSync(`/proc/${info.pid}/uid_map`, 'utf8').trim().split(/\s+/).join(' ')).toBe(mapping);
      expect(readFileSync(`/proc/${info.pid}/gid_map`, 'utf8').trim().split(/\s+/).join(' ')).toBe(mapping);
      const hostUids = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${info.pid}/status`, 'utf8'))?.[1];
      expect(Number(hostUids)).toBe(GUEST_IDS.hostFirst);
      // An exec'd process has the init's confinement: seccomp filter mode, no_new_privs, fewer capabilities.
      const status = (await execCollect(driver, spec.vm_id, { argv: ['cat', '/proc/self/status'] })).stdout.toString();
      expect(status).toMatch(/^Uid:\s+0\s+0\s+0\s+0$/m);
      expect(status).toMatch(/^NoNewPrivs:\s+1$/m);
      expect(status).toMatch(/^Seccomp:\s+2$/m);
      const effective = BigInt(`0x${/^CapEff:\s+([0-9a-f]+)$/m.exec(status)![1]}`);
      const CAP_MKNOD = 27n;
      const CAP_SYS_ADMIN = 21n;
      expect((effective >> CAP_MKNOD) & 1n).toBe(0n);
      expect((effective >> CAP_SYS_ADMIN) & 1n).toBe(0n);
      // What the machine wrote is stored on the host under the guest range, not as host root.
      await execCollect(driver, spec.vm_id, { argv: ['sh', '-c', 'echo x > /root/owned'] });
      expect(statSync(join(stateDir, spec.vm_id, 'disk/upper/root/owned')).uid).toBe(GUEST_IDS.hostFirst);
    });

    itWithCrun("starts later machines from crun's own compilation of the seccomp profile, kept once: the same program, refusing what the profile refuses", async () => {
      // The first machine (beforeAll's, on a fresh state directory) had crun compile the profile; its program is kept.
      const kept = readdirSync(join(stateDir, '.seccomp'));
      expect(kept).toHaveLength(1);
      const program = readFileSync(join(stateDir, '.seccomp', kept[0]));
      const loaded = (vmId: string) => readFileSync(join(runtimeOfMachine(stateDir, vmId).root, containerIdOf(stateDir, vmId), 'seccomp.bpf'));
      const annotations = (vmId: string) => (JSON.parse(readFileSync(join(stateDir, vmId, 'config.json'), 'utf8')) as { annotations?: object }).annotations;
      expect(loaded(spec.vm_id)).toEqual(program);
      expect(annotations(spec.vm_id)).toBeUndefined();

      const second = machineSpec();
      await driver.create(second);
      try {
        expect(annotations(second.vm_id)).toEqual({ [SECCOMP_PROGRAM_ANNOTATION]: program.toString('base64') });
        expect(loaded(second.vm_id)).toEqual(program);
        expect(readdirSync(join(stateDir, '.seccomp'))).toEqual(kept);
        const status = (await execCollect(driver, second.vm_id, { argv: ['cat', '/proc/self/status'] })).stdout.toString();
        expect(status).toMatch(/^Seccomp:\s+2$/m);
        // A user namespace needs no capability from the kernel; the profile refuses it without CAP_SYS_ADMIN.
        const unshare = await execCollect(driver, second.vm_id, { argv: ['unshare', '--user', 'true'] });
        expect(unshare.exit_code).not.toBe(0);
        expect(unshare.stderr.toString()).toContain('Operation not permitted');
      } finally {
        await driver.destroy(second.vm_id);
      }
    });

    it('keeps its state and snapshot directories private and mounts guest data nosuid, nodev (noexec where the host only reads)', async () => {
      // Opened up by hand: the driver closes them again whenever it adds a machine or a snapshot.
      chmodSync(stateDir, 0o755);
      chmodSync(snapshotDir, 0o755);
      // The roots' parent closed by another part of Arbor (the network registry makes its own
      // directory 0700 beside them): guest root must still walk to its root, or the machine cannot start.
      chmodSync(dirname(MACHINE_ROOTS_DIR), 0o700);
      const other = machineSpec();
      await driver.create(other);
      await driver.commit(other.vm_id, `private-${other.vm_id}`);
      await driver.destroy(other.vm_id);
      await driver.deleteSnapshot(`private-${other.vm_id}`);
      for (const dir of [stateDir, snapshotDir, join(stateDir, spec.vm_id)]) expect(statSync(dir).mode & 0o777).toBe(0o700);
      // The machines' roots sit where guest root may walk but not list.
      expect(statSync(MACHINE_ROOTS_DIR).mode & 0o777).toBe(0o711);
      expect(statSync(dirname(MACHINE_ROOTS_DIR)).mode & 0o777).toBe(0o711);
      expect(statSync(join(stateDir, spec.vm_id, 'disk.img')).mode & 0o777).toBe(0o600);
      const optionsOf = (point: string) =>
        readFileSync('/proc/self/mountinfo', 'utf8')
          .split('\n')
          .find((line) => line.split(' ')[4] === point)
          ?.split(' ')[5]
          .split(',');
      expect(optionsOf(join(stateDir, spec.vm_id, 'disk'))).toEqual(expect.arrayContaining(['nosuid', 'nodev', 'noexec']));
      expect(optionsOf(join(MACHINE_ROOTS_DIR, spec.vm_id))).toEqual(expect.arrayContaining(['nosuid', 'nodev']));
    });

    it('limits the machine through its cgroups and puts exec’d processes in them', async () => {
      // Inside its cgroup namespace an exec'd process sits at the root of each hierarchy: the
      // machine's own group (a process anywhere else would show a path out of it, "/..").
      const inMachine = (await execCollect(driver, spec.vm_id, { argv: ['cat', '/proc/self/cgroup'] })).stdout.toString();
      expect(inMachine.trim().split('\n').every((line) => line.endsWith(':/'))).toBe(true);
      // The host sees where that is.
      const cgroups = readFileSync(`/proc/${info.pid}/cgroup`, 'utf8');
      const limit = 300 * 1024 * 1024;
      if (isUnified()) {
        const file = (name: string) => readFileSync(`/sys/fs/cgroup/arbor/${spec.vm_id}/${name}`, 'utf8').trim();
        // Limits are written where the hierarchy offers the controllers (the driver logs the rest).
        const offered = file('cgroup.controllers').split(/\s+/);
        if (offered.includes('memory')) expect(file('memory.max')).toBe(String(limit));
        if (offered.includes('cpu')) expect(file('cpu.max')).toBe('200000 100000');
        if (offered.includes('pids')) expect(file('pids.max')).toBe('16384');
        expect(cgroups).toMatch(new RegExp(`^0::/arbor/${spec.vm_id}$`, 'm'));
        return;
      }
      const v1 = (controller: string, name: string) => readFileSync(`/sys/fs/cgroup/${controller}/arbor/${spec.vm_id}/${name}`, 'utf8').trim();
      expect(v1('memory', 'memory.limit_in_bytes')).toBe(String(limit));
      // Swap cannot stretch the limit where the kernel accounts it.
      if (existsSync(`/sys/fs/cgroup/memory/arbor/${spec.vm_id}/memory.memsw.limit_in_bytes`)) {
        expect(v1('memory', 'memory.memsw.limit_in_bytes')).toBe(String(limit));
      }
      expect(v1('cpu', 'cpu.cfs_quota_us')).toBe('200000');
      expect(v1('pids', 'pids.max')).toBe('16384');
      for (const controller of ['freezer', 'memory', 'cpu', 'pids']) {
        expect(cgroups).toMatch(new RegExp(`:${controller}:/arbor/${spec.vm_id}$`, 'm'));
      }
    });

    it("reads the machine's /etc/environment inside the machine: a symlink to a host path shows no host file", async () => {
      const hostFile = join(stateDir, `host-only-${spec.vm_id}`);
      writeFileSync(hostFile, 'LEAKED=from-the-host\n');
      const run = (script: string) => execCollect(driver, spec.vm_id, { argv: ['sh', '-c', script] });
      await run(`mv /etc/environment /etc/environment.saved && ln -s ${hostFile} /etc/environment`);
      try {
        expect((await run('echo "${LEAKED-unset}|$ROLE"')).stdout.toString()).toBe('unset|\n');
      } finally {
        await run('rm /etc/environment && mv /etc/environment.saved /etc/environment');
      }
      expect((await run('echo "$ROLE"')).stdout.toString()).toBe('sandbox-test\n');
    });

    it('writes to its own upper layer, never to the shared base root filesystem', async () => {
      const name = `written-${spec.vm_id}`;
      const result = await execCollect(driver, spec.vm_id, { argv: ['sh', '-c', `echo data > /root/${name}`] });
      expect(result.exit_code).toBe(0);
      expect(existsSync(join(stateDir, spec.vm_id, 'disk/upper/root', name))).toBe(true);
      expect(existsSync(join(baseRootfsPath(cacheDir), 'root', name))).toBe(false);
    });

    it('is found again, and usable, by a new driver instance on the same state dir (a restarted worker)', async () => {
      await execCollect(driver, spec.vm_id, { argv: ['sh', '-c', 'echo before-restart > /root/marker'] });
      const snapshot = await driver.commit(spec.vm_id, `restart-${spec.vm_id}`);
      const restarted = new SandboxDriver({ stateDir, snapshotDir, cacheDir });
      expect(await restarted.list()).toEqual([{ vm_id: spec.vm_id, state: 'running', pid: info.pid }]);
      expect(await restarted.listSnapshots()).toEqual([snapshot]);
      expect(await restarted.status(spec.vm_id)).toBe('running');
      const read = await execCollect(restarted, spec.vm_id, { argv: ['cat', '/root/marker'] });
      expect(read.stdout.toString()).toBe('before-restart\n');
    });

    it('puts a machine\'s container config and a snapshot in place durably: contents fsynced, then renamed, then the directory fsynced', async () => {
      const durable = machineSpec();
      const snapshotId = `durable-${durable.vm_id}`;
      const { calls } = await traceFileSyscalls(async () => {
        await driver.create(durable);
        await driver.commit(durable.vm_id, snapshotId);
      });
      await driver.destroy(durable.vm_id);
      const quoted = (path: string) => path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      const renameOf = (from: string, to: string) => new RegExp(`^\\d+ rename(?:at2?)?\\(.*"${from}", .*"${quoted(to)}"`);
      const fsyncOf = (path: string) => new RegExp(`^\\d+ fsync\\(\\d+<${path}>\\)`);

      const config = join(stateDir, durable.vm_id, 'config.json');
      const configInPlace = indexOfCall(calls, renameOf(`${quoted(config)}\\.[^"]+\\.tmp`, config));
      expect(configInPlace).toBeGreaterThan(-1);
      expect(indexOfCall(calls, fsyncOf(`${quoted(config)}\\.[^>]+\\.tmp`))).toBeGreaterThan(-1);
      expect(indexOfCall(calls, fsyncOf(`${quoted(config)}\\.[^>]+\\.tmp`))).toBeLessThan(configInPlace);
      expect(indexOfCall(calls, fsyncOf(quoted(join(stateDir, durable.vm_id))), configInPlace)).toBeGreaterThan(configInPlace);

      const scratch = join(snapshotDir, `${snapshotId}.partial`);
      const snapshotInPlace = indexOfCall(calls, renameOf(quoted(scratch), join(snapshotDir, snapshotId)));
      expect(snapshotInPlace).toBeGreaterThan(-1);
      const layerFlushed = indexOfCall(calls, new RegExp(`^\\d+ syncfs\\(\\d+<${quoted(scratch)}>\\)`));
      expect(layerFlushed).toBeGreaterThan(-1);
      expect(layerFlushed).toBeLessThan(snapshotInPlace);
      expect(indexOfCall(calls, fsyncOf(quoted(snapshotDir)), snapshotInPlace)).toBeGreaterThan(snapshotInPlace);
    }, 120_000);

    it("pauses through the cgroup freezer in the runtime's view too: it reports the machine paused, then running", async () => {
      const runtime = runtimeOfMachine(stateDir, spec.vm_id);
      await driver.pause(spec.vm_id);
      try {
        expect((await runtime.state(spec.vm_id))?.status).toBe('paused');
      } finally {
        await driver.resume(spec.vm_id);
      }
      expect((await runtime.state(spec.vm_id))?.status).toBe('running');
      expect((await execCollect(driver, spec.vm_id, { argv: ['echo', 'thawed'] })).stdout.toString()).toBe('thawed\n');
    });

    it('rejects vm ids that could escape the state directory', async () => {
      await expect(driver.create(machineSpec({ vm_id: '../escape' }))).rejects.toThrow(/invalid vm id/);
      expect(existsSync(join(stateDir, '..', 'escape'))).toBe(false);
    });

    it('leaves no process, mount, cgroup or file behind after destroy', async () => {
      const doomed = machineSpec();
      const doomedInfo = await driver.create(doomed);
      await execCollect(driver, doomed.vm_id, { argv: ['sh', '-c', '(sleep 1000 &) </dev/null >/dev/null 2>&1; sleep 1000 </dev/null >/dev/null 2>&1 &'] });
      const members = await machineCgroupPids(doomed.vm_id);
      expect(members).toContain(doomedInfo.pid);
      expect(members.length).toBeGreaterThanOrEqual(3); // init, two sleeps
      await driver.resizeDisk(doomed.vm_id, doomed.fs_size_mib + 256);
      expect(loopDevicesUnder(join(stateDir, doomed.vm_id))).toHaveLength(1);
      await driver.pause(doomed.vm_id); // destroy must also work on a frozen machine
      const gone = await footprint(driver, stateDir, doomed.vm_id);

      await driver.destroy(doomed.vm_id);

      await gone();
      expect(await driver.status(doomed.vm_id)).toBeNull();
    });
  });
  describe('images on this host: a root filesystem from a user is hostile', () => {
    let driver: SandboxDriver;
    let imageDir: string;
    let hostSecret: ReturnType<typeof makeHostSecret>;
    const vms: string[] = [];

    beforeAll(async () => {
      ({ driver, imageDir } = await newDriver());
      await driver.prepare();
      hostSecret = makeHostSecret();
    }, 15 * 60_000);

    afterAll(async () => {
      for (const vm of vms) await driver?.destroy(vm);
      hostSecret?.remove();
    });

    const hostileRoot = async () => {
      const root = join(await newStateDir(), 'root');
      busyboxRoot(root);
      mkdirSync(join(root, 'root'), { mode: 0o700 });
      // A device node of the host's memory, a setuid-root program, a link to a host secret.
      execFileSync('mknod', ['-m', '0666', join(root, 'root/mem'), 'c', '1', '1']);
      copyFileSync(join(root, 'bin/busybox'), join(root, 'bin/suid-shell'));
      chmodSync(join(root, 'bin/suid-shell'), 0o4755);
      symlinkSync(hostSecret.path, join(root, 'root/secret'));
      symlinkSync('/', join(root, 'host-root'));
      return root;
    };

    it('makes a layer the host cannot be hurt by: no device node, no setuid bit, every file guest-owned, links never followed', async () => {
      const secretBefore = statSync(hostSecret.path);
      const image = await driver.buildImage({ image_id: randomUUID(), rootfs_dir: await hostileRoot(), extra_size_mib: 0 });
      const layer = join(imageDir, image.image_id, 'layer');
      expect(statSync(imageDir).mode & 0o777).toBe(0o700);
      const found = execFileSync('find', [layer, '(', '-type', 'b', '-o', '-type', 'c', '-o', '-perm', '/6000', '-o', '-not', '-uid', String(GUEST_IDS.hostFirst), ')', '-print'], {
        encoding: 'utf8',
      });
      expect(found).toBe('');
      // The links are the image's own, unchanged, and the host file they name is untouched.
      expect(readlinkSync(join(layer, 'root/secret'))).toBe(hostSecret.path);
      expect(statSync(hostSecret.path)).toMatchObject({ uid: secretBefore.uid, mode: secretBefore.mode });
      const spec = machineSpec({ image_id: image.image_id });
      await driver.create(spec);
      vms.push(spec.vm_id);
      // Inside, the links resolve in the machine: no host secret, no host root.
      const secret = await execCollect(driver, spec.vm_id, { argv: ['cat', '/root/secret'] });
      expect(secret.exit_code).toBe(1);
      expect(secret.stdout.toString()).not.toContain(hostSecret.value);
      expect((await execCollect(driver, spec.vm_id, { argv: ['ls', '/host-root/'] })).stdout.toString()).not.toMatch(/\bhome\b.*\bvar\b/s);
      expect((await execCollect(driver, spec.vm_id, { argv: ['ls', '/root/mem'] })).exit_code).not.toBe(0);
    });

    it('refuses a root filesystem holding a hard link to a host file, keeping nothing and changing nothing', async () => {
      const root = await hostileRoot();
      linkSync(hostSecret.path, join(root, 'root/linked-secret'));
      const before = statSync(hostSecret.path);
      const image_id = randomUUID();
      await expect(driver.buildImage({ image_id, rootfs_dir: root, extra_size_mib: 0 })).rejects.toThrow(/hard links/);
      expect(await driver.getImage(image_id)).toBeNull();
      expect(readdirSync(imageDir).filter((name) => name.startsWith(image_id) && !name.endsWith('.lock'))).toEqual([]);
      expect(statSync(hostSecret.path)).toMatchObject({ uid: before.uid, gid: before.gid, mode: before.mode });
    });
  });

  describe('snapshot layers on this host', () => {
    let driver: SandboxDriver;
    let stateDir: string;
    let snapshotDir: string;

    beforeAll(async () => {
      ({ driver, stateDir, snapshotDir } = await newDriver());
      await driver.prepare();
    }, 15 * 60_000);

    afterAll(async () => {
      for (const machine of (await driver?.list()) ?? []) await driver.destroy(machine.vm_id);
    });

    const run = async (vmId: string, script: string) => {
      const result = await execCollect(driver, vmId, { argv: ['sh', '-c', script] });
      expect(result.stderr.toString()).toBe('');
      expect(result.exit_code).toBe(0);
      return result.stdout.toString();
    };

    it(`flattens a chain deeper than ${MAX_SNAPSHOT_LAYERS} layers into one, keeping files and deletions`, async () => {
      const generations = MAX_SNAPSHOT_LAYERS + 1;
      let vmId = (await driver.create(machineSpec())).vm_id;
      let lowers: string[] = [];
      for (let generation = 1; generation <= generations; generation++) {
        await run(vmId, `echo ${generation} > /root/gen-${generation}${generation === 5 ? '; rm /root/gen-2 /etc/debian_version' : ''}`);
        await driver.commit(vmId, `chain-${generation}`);
        await driver.destroy(vmId);
        vmId = (await driver.startFromSnapshot(`chain-${generation}`, snapshotMachineSpec())).vm_id;
        lowers = overlayLowerDirs(join(MACHINE_ROOTS_DIR, vmId));
        // identity layer + guest kit + snapshot layers (+ the base until the chain is flattened)
        expect(lowers.length).toBeLessThanOrEqual(MAX_SNAPSHOT_LAYERS + 3);
      }
      expect(lowers).toEqual([join(stateDir, vmId, 'identity'), kitLayerPath(cacheDir), join(snapshotDir, `chain-${generations}`, 'layer')]);
      const expected = Array.from({ length: generations }, (_, i) => `gen-${i + 1}`).filter((name) => name !== 'gen-2');
      expect((await run(vmId, 'cd /root && ls gen-* | sort -V')).trim().split('\n')).toEqual(expected);
      expect(await run(vmId, 'cat /root/gen-1; [ -e /etc/debian_version ] || echo deleted')).toBe('1\ndeleted\n');
      expect(await run(vmId, 'ls /bin/sh /usr/bin/env')).toBe('/bin/sh\n/usr/bin/env\n');
    }, 5 * 60_000);

    it('hides a deleted snapshot that a later one sits on, and removes its files once nothing does', async () => {
      const source = (await driver.create(machineSpec())).vm_id;
      await run(source, 'echo parent > /root/parent');
      await driver.commit(source, 'parent');
      const middle = (await driver.startFromSnapshot('parent', snapshotMachineSpec())).vm_id;
      await run(middle, 'echo child > /root/child');
      await driver.commit(middle, 'child');
      await driver.destroy(middle);

      await driver.deleteSnapshot('parent');
      expect(await driver.getSnapshot('parent')).toBeNull();
      await expect(driver.startFromSnapshot('parent', snapshotMachineSpec())).rejects.toThrow(/not found/);
      expect(existsSync(join(snapshotDir, 'parent'))).toBe(true); // 'child' sits on its layer

      const grandchild = (await driver.startFromSnapshot('child', snapshotMachineSpec())).vm_id;
      expect(await run(grandchild, 'cat /root/parent /root/child')).toBe('parent\nchild\n');
      await driver.destroy(grandchild);
      await driver.deleteSnapshot('child');
      await driver.deleteSnapshot('child'); // a replayed delete succeeds
      expect((await readdir(snapshotDir)).filter((name) => ['parent', 'child'].includes(name))).toEqual([]);
      expect(await run(source, 'cat /root/parent')).toBe('parent\n');
    }, 5 * 60_000);
  });
});

/**
 * runc, the runtime where crun cannot run (and the one machines started before crun was chosen
 * go on under): the whole contract again on it, and a machine of it kept running under it by a
 * restarted driver that prefers crun.
 */
describeAsRoot('SandboxDriver under runc (ARBOR_SANDBOX_RUNTIME=runc)', () => {
  let runcStateDir: string;
  let runcDriver: SandboxDriver;
  describeHypervisorDriverContract(
    'sandbox under runc',
    async () => {
      const { driver, stateDir } = await newDriver(undefined, undefined, undefined, 'runc');
      runcStateDir = stateDir;
      runcDriver = driver;
      return driver;
    },
    { footprint: (vmId) => footprint(runcDriver, runcStateDir, vmId), expectShape: expectLimitsBite },
  );

  it('keeps a machine started under runc on runc after a restart that prefers crun, and starts new ones under crun', async () => {
    const { driver, stateDir, snapshotDir, imageDir } = await newDriver(undefined, undefined, undefined, 'runc');
    const old = machineSpec();
    await driver.create(old);
    expect(runtimeOfMachine(stateDir, old.vm_id).name).toBe('runc');
    const restarted = new SandboxDriver({ stateDir, snapshotDir, imageDir, cacheDir, runtime: 'crun' });
    drivers.push(restarted);
    const fresh = machineSpec();
    try {
      await restarted.create(fresh);
      expect(runtimeOfMachine(stateDir, fresh.vm_id).name).toBe('crun');
      for (const vm of [old, fresh]) {
        expect((await execCollect(restarted, vm.vm_id, { argv: ['hostname'] })).stdout.toString()).toBe(`${vm.identity.hostname}\n`);
        const runtime = runtimeOfMachine(stateDir, vm.vm_id);
        await restarted.pause(vm.vm_id);
        expect((await runtime.state(vm.vm_id))?.status).toBe('paused');
        await restarted.resume(vm.vm_id);
      }
      const snapshot = await restarted.commit(old.vm_id, `from-runc-${old.vm_id}`);
      const child = snapshotMachineSpec();
      await restarted.startFromSnapshot(snapshot.snapshot_id, child);
      expect(runtimeOfMachine(stateDir, child.vm_id).name).toBe('crun');
    } finally {
      for (const machine of await restarted.list()) await restarted.destroy(machine.vm_id);
    }
    await restarted.reaped();
    expect(existsSync(join(stateDir, '.runc', old.vm_id))).toBe(false);
    expect(existsSync(join(stateDir, '.crun', fresh.vm_id))).toBe(false);
  }, 120_000);
});

describeAsRoot('SandboxDriver warm pool', () => {
  const shape = { vcpu_count: 1, mem_size_mib: 200, fs_size_mib: 512 };
  const pool = { size: 2, shape };
  let driver: SandboxDriver;
  let stateDir: string;
  let snapshotDir: string;
  const vms: string[] = [];
  const warmIds = () => readdirSync(join(stateDir, '.warm'));

  /** From inside `vmId`: the SSH greeting of [address]:22, or "failed". */
  const sshGreetingFrom = async (vmId: string, address: string) => {
    const script = `use IO::Socket::IP; my $s = IO::Socket::IP->new(PeerHost => '${address}', PeerPort => 22, Timeout => 3); if ($s) { my $l = <$s>; print substr($l, 0, 8) } else { print "failed" }`;
    return (await execCollect(driver, vmId, { argv: ['perl', '-e', script] })).stdout.toString();
  };
  const create = async (spec: MachineSpec) => {
    vms.push(spec.vm_id);
    return driver.create(spec);
  };

  beforeAll(async () => {
    ({ driver, stateDir, snapshotDir } = await newDriver((line) => console.log(line), pool));
    await driver.prepare();
    await driver.warmPoolFull();
  }, 15 * 60_000);

  afterAll(async () => {
    for (const vmId of vms) await driver?.destroy(vmId);
    await driver?.close();
  }, 5 * 60_000);

  it("hands waiting machines to creates: each the VM's own identity and its group's walls, and the pool fills again", async () => {
    const waiting = warmIds();
    expect(waiting).toHaveLength(2);
    const a = machineSpec({ ...shape, env: { OWNER: 'a' }, network_group: 'org-a' });
    const b = machineSpec({ ...shape, env: { OWNER: 'b' }, network_group: 'org-b' });
    const [infoA, infoB] = [await create(a), await create(b)];
    // Claimed, not made: each runs under a waiting machine's id, its directory now the VM's.
    expect([containerIdOf(stateDir, a.vm_id), containerIdOf(stateDir, b.vm_id)].sort()).toEqual([...waiting].sort());
    for (const [spec, info] of [[a, infoA], [b, infoB]] as const) {
      expect(await driver.status(spec.vm_id)).toBe('running');
      const identity = await identityOf(driver, spec.vm_id);
      expect(identity.unameHostname).toBe(spec.identity.hostname);
      expect(identity.etcHostname).toBe(spec.identity.hostname);
      expect(identity.environment).toBe(`OWNER=${spec.env.OWNER}\n`);
      expect(identity.authorizedKeys.trim()).toBe(spec.identity.ssh_authorized_key);
      expect(await driver.addresses(spec.vm_id)).toEqual(info.addresses);
    }
    const [idA, idB] = [await identityOf(driver, a.vm_id), await identityOf(driver, b.vm_id)];
    expect(idA.machineId).not.toBe(idB.machineId);
    expect(idA.hostKeyPub).not.toBe(idB.hostKeyPub);
    // The org's walls come with the claim: a's group reaches a, b's does not.
    const a2 = machineSpec({ ...shape, network_group: 'org-a' });
    await create(a2); // the pool may be empty now: then it is made cold, which is as good here
    expect(await sshGreetingFrom(a2.vm_id, infoA.addresses!.ipv6)).toBe('SSH-2.0-');
    expect(await sshGreetingFrom(b.vm_id, infoA.addresses!.ipv6)).toBe('failed');
    await driver.warmPoolFull();
    expect(warmIds().filter((id) => waiting.includes(id))).toEqual([]);
    expect(warmIds()).toHaveLength(2);
  }, 5 * 60_000);

  it("serves a claimed VM's variables over SSH too (the kit's sshd started with the warm machine's, none)", async () => {
    await driver.warmPoolFull();
    const scratch = await mkdtemp(join(tmpdir(), 'arbor-warm-ssh-'));
    try {
      const key = await clientKey(scratch);
      const base = machineSpec({ ...shape, env: { OWNER: 'over ssh' } });
      const spec = { ...base, identity: { ...base.identity, ssh_authorized_key: key.publicKey } };
      const info = await create(spec);
      expect(containerIdOf(stateDir, spec.vm_id)).not.toBe(spec.vm_id);
      expect(await overSsh(info.addresses!.ipv6, key.path, 'echo "$OWNER"')).toBe('over ssh\n');
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }, 5 * 60_000);

  it('creates a machine of another shape cold, and turns the pool to that shape', async () => {
    const other = machineSpec({ vcpu_count: 1, mem_size_mib: 256, fs_size_mib: 600 });
    await create(other);
    expect(containerIdOf(stateDir, other.vm_id)).toBe(other.vm_id);
    await driver.warmPoolFull();
    const shapes = warmIds().map((id) => (JSON.parse(readFileSync(join(stateDir, '.warm', id, 'machine.json'), 'utf8')) as { spec: MachineSpec }).spec.fs_size_mib);
    expect(shapes).toEqual([600, 600]);
    const next = machineSpec({ vcpu_count: 1, mem_size_mib: 256, fs_size_mib: 600 });
    await create(next);
    expect(containerIdOf(stateDir, next.vm_id)).not.toBe(next.vm_id);
    expect((await execCollect(driver, next.vm_id, { argv: ['hostname'] })).stdout.toString()).toBe(`${next.identity.hostname}\n`);
  }, 5 * 60_000);

  it('is never adopted by a restarted driver: what waited is destroyed and the pool made again; claimed machines are VMs like any other', async () => {
    await driver.warmPoolFull();
    const before = warmIds();
    const cgroupsBefore = before.flatMap((id) => machineCgroupDirs(id));
    const restarted = new SandboxDriver({ stateDir, snapshotDir, cacheDir, warmPool: { size: 2, shape: { vcpu_count: 1, mem_size_mib: 256, fs_size_mib: 600 } } });
    try {
      await restarted.prepare();
      expect(cgroupsBefore.filter((dir) => existsSync(dir))).toEqual([]);
      await restarted.warmPoolFull();
      expect(warmIds().filter((id) => before.includes(id))).toEqual([]);
      expect(warmIds()).toHaveLength(2);
      for (const vmId of vms) expect(await restarted.status(vmId)).toBe('running');
      expect((await execCollect(restarted, vms[0], { argv: ['cat', '/etc/environment'] })).stdout.toString()).toBe('OWNER=a\n');
    } finally {
      await restarted.close();
    }
    expect(warmIds()).toEqual([]);
  }, 10 * 60_000);

  it('leaves no warm machine behind once closed', async () => {
    const fresh = await newDriver(undefined, pool);
    await fresh.driver.prepare();
    await fresh.driver.warmPoolFull();
    const ids = readdirSync(join(fresh.stateDir, '.warm'));
    expect(ids).toHaveLength(2);
    const held = await Promise.all(ids.map(async (id) => ({ cgroups: machineCgroupDirs(id), members: await machineCgroupPids(id), root: join(MACHINE_ROOTS_DIR, id) })));
    await fresh.driver.close();
    expect(readdirSync(join(fresh.stateDir, '.warm'))).toEqual([]);
    for (const { cgroups, members, root } of held) {
      expect(await waitUntilGone(members)).toEqual([]);
      expect(cgroups.filter((dir) => existsSync(dir))).toEqual([]);
      expect(readFileSync('/proc/mounts', 'utf8')).not.toContain(root);
    }
    expect(loopDevicesUnder(fresh.stateDir)).toEqual([]);
  }, 10 * 60_000);
});
