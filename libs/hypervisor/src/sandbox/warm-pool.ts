import { rename, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { MachineInfo, MachineSpec } from '../hypervisor-driver.port';
import { ensurePrivateDirectory } from '../host/private-directory';
import { isAlive } from '../host/process-identity';
import type { HostNetwork } from '../network/host-network';
import { setMachineHostname } from './machine-hostname';
import { hostnameOf, rewriteIdentityLayer } from './machine-identity-files';
import { MachineLayout, type MachineRecord } from './machine-layout';
import { ReadyPool } from './ready-pool';

/** The shape of a machine: what its cgroups and disk were made for. */
export type MachineShape = Pick<MachineSpec, 'vcpu_count' | 'mem_size_mib' | 'fs_size_mib'>;

export interface WarmPoolOptions {
  /** Machines kept booted and waiting (0: none). */
  size: number;
  /** The shape they are made in until a create asks for another (then the pool follows it). */
  shape: MachineShape;
}

/** What the pool needs of the driver: to boot and to tear down a machine in a directory of its own. */
export interface WarmPoolHost {
  /** The driver's state directory: a claimed machine's directory moves there, as `<vm_id>`. */
  stateDir: string;
  /** The VMs' network, which takes a claimed machine's lease over (HostNetwork.adopt). */
  network: HostNetwork;
  /** Boots the machine reserved in `layout` (its record written), in no network group; throws on failure. */
  boot(layout: MachineLayout): Promise<MachineInfo>;
  /** Tears down whatever the machine in `layout` holds, its lease (by its warm id) included; idempotent. */
  destroy(layout: MachineLayout): Promise<void>;
  /** Has the running machine in `layout` serve its /etc/environment as it is now over SSH (sshd-environment.ts). */
  refreshSshEnvironment(layout: MachineLayout, record: MachineRecord): Promise<void>;
  log: (line: string) => void;
}

/** Warm machines booting at once: the pool refills behind a burst without taking the host from it (ReadyPool: only when the driver is quiet). */
const FILL_CONCURRENCY = 2;

/**
 * Machines of the default image booted ahead of time, so that a create is a claim plus identity.
 * A warm machine is a whole machine (disk, identity layer with its own machine id and SSH host
 * key, overlay root, container, a network port of no group: it reaches no machine and no machine
 * reaches it, sshd listening), made in `<stateDir>/.warm/<id>`, where the worker's list never
 * looks, under an id of its own that it keeps for life (its container, cgroups and root mount).
 *
 * A create of the default image (no image_id) in the pool's shape claims one (handOver): the
 * files of its identity layer that say whose it is (hostname, environment, spec, authorized key)
 * are rewritten in place, its hostname set, the guest kit's sshd made to read the environment again
 * when the VM has variables (it took the warm machine's, none, as it started), its lease handed to the VM and joined to the VM's group (the org's walls), its record
 * written, and its directory renamed to `<stateDir>/<vm_id>`; from then on it is the VM's machine
 * like any other. Each warm machine is claimed at most once, and it ran nothing of anyone's
 * before, so nothing of one tenant can reach another. A warm machine that cannot be handed over is
 * destroyed and the create made cold.
 *
 * Crash safety: warm machines are never adopted (ReadyPool). Whatever a start finds in the warm
 * directory (waiting, half made, or half handed over) is destroyed, and the pool filled again; a
 * lease handed over whose directory never moved in is a sweep's to take back (its directory is gone).
 */
export class WarmPool extends ReadyPool<MachineShape> {
  constructor(
    private readonly host: WarmPoolHost,
    options: WarmPoolOptions,
  ) {
    super(join(host.stateDir, '.warm'), { noun: 'warm machine', size: options.size, kind: options.shape, concurrency: FILL_CONCURRENCY }, host.log);
  }

  /** Destroys what an earlier run left in the warm directory, then starts filling the pool (if it has a size). */
  override async start(): Promise<void> {
    await ensurePrivateDirectory(this.host.stateDir);
    await super.start();
  }

  /**
   * The machine for `spec` made out of a warm one, or null when none fits (another image, another
   * shape: the pool then turns to that shape; or none waiting): the caller creates it cold.
   */
  async claim(spec: MachineSpec): Promise<MachineInfo | null> {
    if (this.off || spec.image_name !== 'default' || spec.image_id) return null;
    if (!sameShape(spec, this.kind)) {
      this.follow({ vcpu_count: spec.vcpu_count, mem_size_mib: spec.mem_size_mib, fs_size_mib: spec.fs_size_mib });
      return null;
    }
    const id = this.take();
    if (!id) return null;
    try {
      return await this.handOver(id, spec);
    } catch (error) {
      this.host.log(`sandbox: handing warm machine ${id} to ${spec.vm_id} failed, creating it cold: ${(error as Error).message}`);
      await this.discard(id, spec.vm_id);
      return null;
    }
  }

  /** A warm machine of `shape`, booted in `layout` (claimed for it) in no network group. */
  protected async build(layout: MachineLayout, shape: MachineShape): Promise<void> {
    const id = layout.vmId;
    const spec: MachineSpec = { vm_id: id, ...shape, image_name: 'default', image_id: null, env: {}, identity: { hostname: id, ssh_authorized_key: null }, network_group: '' };
    // The container named from the start: a claimed machine whose claim's record a crash lost still runs under it.
    await layout.writeRecord({ spec, source_snapshot_id: null, chain: { snapshots: [], base: true, image_id: null }, container: id });
    await this.host.boot(layout);
  }

  protected tearDown(layout: MachineLayout): Promise<void> {
    return this.host.destroy(layout);
  }

  private async handOver(id: string, spec: MachineSpec): Promise<MachineInfo> {
    const warm = new MachineLayout(this.dir, id);
    const record = await warm.readRecord();
    if (!record?.init || !(await isAlive(record.init))) throw new Error(`warm machine ${id} is not running`);
    // The VM's name first: refused if it exists, as a cold create would be (MachineDirectory.claim).
    await new MachineLayout(this.host.stateDir, spec.vm_id).claim();
    await rewriteIdentityLayer(warm.identity, spec);
    await setMachineHostname(record.init.pid, hostnameOf(spec));
    // An exec in the machine (tens of milliseconds), so only when there is something to say.
    if (Object.keys(spec.env).length > 0) await this.host.refreshSshEnvironment(warm, record);
    const lease = await this.host.network.adopt(id, spec.vm_id, spec.network_group);
    // Not fsync'd: the warm record already names the container, all a crash could need of this one.
    const claimed: MachineRecord = { spec, source_snapshot_id: null, chain: record.chain, init: record.init, container: id, runtime: record.runtime };
    await warm.writeRecord(claimed, { durable: false });
    // Onto the empty directory the claim made: one rename, the machine is the VM's.
    await rename(warm.dir, join(this.host.stateDir, spec.vm_id));
    this.host.log(`sandbox: machine ${spec.vm_id} running (warm machine ${id}, init pid ${record.init.pid}, ${lease.ipv6}, ${lease.ipv4})`);
    return { vm_id: spec.vm_id, state: 'running', pid: record.init.pid, addresses: { ipv6: lease.ipv6, ipv4: lease.ipv4, mac: lease.mac } };
  }

  /** A warm machine that could not be handed over: gone, with whatever of the VM's the attempt made. */
  private async discard(id: string, vm_id: string): Promise<void> {
    await this.destroy(id).catch((error: Error) => this.host.log(`sandbox: removing warm machine ${id} failed: ${error.message}`));
    await this.host.network.detach(vm_id).catch(() => undefined);
    await rmdir(join(this.host.stateDir, vm_id)).catch(() => undefined); // only the empty claim: a moved-in machine is not empty
  }
}

function sameShape(a: MachineShape, b: MachineShape): boolean {
  return a.vcpu_count === b.vcpu_count && a.mem_size_mib === b.mem_size_mib && a.fs_size_mib === b.fs_size_mib;
}
