import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  MachineNotFoundError,
  type DriverProbe,
  type ExecChunk,
  type ExecResult,
  type ExecSpec,
  type HypervisorDriver,
  type MachineInfo,
  type MachineSpec,
  type MachineState,
} from '../hypervisor-driver.port';
import { baseRootfsPath, ensureBaseRootfs } from './base-rootfs';
import { parseEnvironmentFile } from './environment-file';
import { unmountAllUnder } from './host-mounts';
import { MachineCgroups } from './machine-cgroups';
import { hostnameOf, writeMachineIdentityFiles } from './machine-identity-files';
import { isSafeVmId, MachineLayout } from './machine-layout';
import { launchNamespaceInit } from './namespace-launcher';
import { mountOverlayRoot } from './overlay-root';
import { DEFAULT_EXEC_ENV, execInNamespaces } from './namespace-exec';
import { isAlive, type ProcessIdentity } from './process-identity';
import { runCommand } from './run-command';

export interface SandboxDriverOptions {
  /** Per-machine state (overlay layers, records); machines are found here again after a restart. */
  stateDir: string;
  /** Host-wide cache shared by data directories and test runs (the base root filesystem). */
  cacheDir: string;
  log?: (line: string) => void;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Machines as Linux namespaces (mount, PID, UTS, IPC) over an overlayfs copy-on-write root, limited
 * and frozen through cgroup v1. The network namespace is shared with the host.
 */
export class SandboxDriver implements HypervisorDriver {
  readonly name = 'sandbox';
  private readonly log: (line: string) => void;

  constructor(private readonly options: SandboxDriverOptions) {
    this.log = options.log ?? (() => undefined);
  }

  async probe(): Promise<DriverProbe> {
    if (process.getuid?.() !== 0) return { ok: false, reason: 'needs root (namespaces, mounts, cgroups)' };
    if (!MachineCgroups.isSupported()) {
      return { ok: false, reason: 'cgroup v1 freezer/memory/cpu/pids hierarchies not mounted under /sys/fs/cgroup' };
    }
    const filesystems = await readFile('/proc/filesystems', 'utf8');
    if (!/\toverlay$/m.test(filesystems)) return { ok: false, reason: 'overlayfs not available' };
    for (const tool of ['unshare', 'nsenter', 'chroot', 'flock']) {
      const found = await runCommand('sh', ['-c', `command -v ${tool}`]).catch(() => '');
      if (!found) return { ok: false, reason: `${tool} not installed (util-linux/coreutils)` };
    }
    if (!existsSync(baseRootfsPath(this.options.cacheDir))) {
      const debootstrap = await runCommand('sh', ['-c', 'command -v debootstrap']).catch(() => '');
      if (!debootstrap) return { ok: false, reason: 'no base root filesystem cached and debootstrap not installed' };
    }
    return { ok: true, reason: 'namespaces + overlayfs + cgroup v1 freezer available' };
  }

  async prepare(): Promise<void> {
    await ensureBaseRootfs(this.options.cacheDir, this.log);
  }

  async create(spec: MachineSpec): Promise<MachineInfo> {
    if (spec.image_name !== 'default') throw new Error(`sandbox has no image "${spec.image_name}" (only "default")`);
    const layout = new MachineLayout(this.options.stateDir, spec.vm_id);
    const base = await ensureBaseRootfs(this.options.cacheDir, this.log);
    await mkdir(this.options.stateDir, { recursive: true });
    try {
      await mkdir(layout.dir); // fails if the machine exists: creation is never a silent overwrite
    } catch (error: any) {
      if (error.code === 'EEXIST') throw new Error(`machine ${spec.vm_id} already exists on this host`);
      throw error;
    }
    const cgroups = new MachineCgroups(spec.vm_id);
    try {
      await cgroups.create({ memMib: spec.mem_size_mib, vcpus: spec.vcpu_count });
      await mountOverlayRoot(base, layout);
      await writeMachineIdentityFiles(layout.merged, spec);
      const init = await launchNamespaceInit({
        root: layout.merged,
        hostname: hostnameOf(spec),
        cgroupProcsFiles: cgroups.procsFiles(),
        logFile: layout.initLog,
      });
      await layout.writeRecord({ spec, init });
      this.log(`sandbox: machine ${spec.vm_id} running (init pid ${init.pid})`);
      return { vm_id: spec.vm_id, state: 'running', pid: init.pid };
    } catch (error) {
      await this.destroy(spec.vm_id).catch(() => undefined);
      throw error;
    }
  }

  async destroy(vm_id: string): Promise<void> {
    if (!isSafeVmId(vm_id)) return; // no such machine can exist
    const layout = new MachineLayout(this.options.stateDir, vm_id);
    const cgroups = new MachineCgroups(vm_id);
    const record = await layout.readRecord();
    // Thaw first: a frozen process cannot act on SIGKILL until it runs again.
    if ((await cgroups.freezerState()) !== null) await cgroups.setFrozen(false);
    if (record) await killAndWait(record.init); // PID 1 dying takes its whole PID namespace along
    // Anything else still in the machine's cgroups (e.g. an nsenter on its way in) goes too.
    for (let round = 0; round < 50; round++) {
      const pids = await cgroups.memberPids();
      if (pids.length === 0) break;
      for (const pid of pids) killQuietly(pid);
      await sleep(20);
    }
    await unmountAllUnder(layout.dir);
    await cgroups.remove();
    await rm(layout.dir, { recursive: true, force: true });
  }

  async pause(vm_id: string): Promise<void> {
    await this.requireRunningInit(vm_id);
    await new MachineCgroups(vm_id).setFrozen(true);
  }

  async resume(vm_id: string): Promise<void> {
    await this.requireRunningInit(vm_id);
    await new MachineCgroups(vm_id).setFrozen(false);
  }

  async status(vm_id: string): Promise<MachineState | null> {
    if (!isSafeVmId(vm_id)) return null;
    const layout = new MachineLayout(this.options.stateDir, vm_id);
    if (!existsSync(layout.dir)) return null;
    const record = await layout.readRecord();
    if (!record || !(await isAlive(record.init))) return 'dead';
    return (await new MachineCgroups(vm_id).freezerState()) === 'FROZEN' ? 'paused' : 'running';
  }

  async list(): Promise<MachineInfo[]> {
    const entries = await readdir(this.options.stateDir, { withFileTypes: true }).catch(() => []);
    const machines: MachineInfo[] = [];
    for (const entry of entries) {
      if (!entry.isDirectory()) continue;
      const state = await this.status(entry.name).catch(() => null);
      if (state === null) continue;
      const record = await new MachineLayout(this.options.stateDir, entry.name).readRecord();
      machines.push({ vm_id: entry.name, state, pid: record?.init.pid });
    }
    return machines;
  }

  async exec(vm_id: string, spec: ExecSpec, onChunk: (chunk: ExecChunk) => void): Promise<ExecResult> {
    const { layout, init } = await this.requireRunningInit(vm_id);
    // Like a login: defaults, then the machine's /etc/environment, then the exec's own env.
    const machineEnv = parseEnvironmentFile(
      await readFile(join(layout.merged, 'etc/environment'), 'utf8').catch(() => ''),
    );
    return execInNamespaces(
      {
        initPid: init.pid,
        cgroupProcsFiles: new MachineCgroups(vm_id).procsFiles(),
        env: { ...DEFAULT_EXEC_ENV, ...machineEnv, ...(spec.env ?? {}) },
      },
      spec,
      onChunk,
    );
  }

  private async requireRunningInit(vm_id: string): Promise<{ layout: MachineLayout; init: ProcessIdentity }> {
    if (!(await this.status(vm_id))) throw new MachineNotFoundError(vm_id);
    const layout = new MachineLayout(this.options.stateDir, vm_id);
    const record = await layout.readRecord();
    if (!record || !(await isAlive(record.init))) throw new Error(`machine ${vm_id} is dead`);
    return { layout, init: record.init };
  }
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    /* already gone */
  }
}

async function killAndWait(init: ProcessIdentity): Promise<void> {
  for (let attempt = 0; attempt < 500 && (await isAlive(init)); attempt++) {
    killQuietly(init.pid);
    await sleep(10);
  }
  if (await isAlive(init)) throw new Error(`sandbox init ${init.pid} survived SIGKILL`);
}
