import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isSafeId } from '../host/safe-id';

/**
 * Where the host's network registry lives: in /run, like the kernel state it describes (bridge,
 * interfaces, namespaces, nftables rules), so both go with a reboot and never disagree after one.
 */
export const NETWORK_REGISTRY_DIR = '/run/arbor/network';

/**
 * The group of a machine in none (a warm machine's): the empty string, which names no org. A
 * string, not a null, so that the lease files of the registry, which every installation on the
 * host reads, keep the shape they have always had.
 */
export const NO_GROUP = '';

/** A machine's hold on the bridge: its addresses and the host objects that carry them. */
export interface NetworkLease {
  vm_id: string;
  /**
   * The state directory of the driver whose machine holds the lease: once `<owner>/<vm_id>` is gone
   * the lease belongs to no machine and a sweep takes it back (the directory is claimed before the
   * lease is made and removed only after it is released).
   */
  owner: string;
  /**
   * Machines of one group may reach each other; of different groups, never (the control plane's
   * org). NO_GROUP: a machine of no group, which reaches no machine and no machine reaches (a warm
   * machine waiting to be claimed; it joins its group with its owner).
   */
  group: string;
  /**
   * veth: a pair whose other end is eth0 in the machine's network namespace (sandbox), made as the
   * namespace is; tap: a QEMU NIC's backend, made with the lease.
   */
  port: 'veth' | 'tap';
  /** The host-side interface, a port of the bridge. */
  ifname: string;
  mac: string;
  ipv4: string;
  ipv6: string;
  link_local: string;
}

/**
 * The leases of one bridge, a file each (`<vm_id>.json`, written atomically), shared by every
 * driver of every installation that uses the bridge. Callers hold the bridge's host lock.
 */
export class NetworkLeases {
  private constructor(readonly dir: string) {}

  private static readonly registries = new Map<string, NetworkLeases>();

  /** The leases in `dir` (one instance per directory in this process). */
  static in(dir: string): NetworkLeases {
    let leases = NetworkLeases.registries.get(dir);
    if (!leases) NetworkLeases.registries.set(dir, (leases = new NetworkLeases(dir)));
    return leases;
  }

  /*
   * Synchronous file calls, on purpose: the registry is in /run, a tmpfs, where reading or
   * renaming a lease takes microseconds, while Node's asynchronous file calls queue on a thread
   * pool that a worker making many machines at once keeps busy with fsyncs of its disk files:
   * reading a few hundred leases for one attach could wait there for a second. No fsync either:
   * the registry describes kernel state that a reboot takes along with it (see NETWORK_REGISTRY_DIR),
   * and a rename still never shows a reader half a lease.
   */

  async all(): Promise<NetworkLease[]> {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return [];
    }
    return names
      .filter((name) => name.endsWith('.json'))
      .map((name) => this.read(name.slice(0, -5)))
      .filter((lease): lease is NetworkLease => lease !== null);
  }

  async get(vmId: string): Promise<NetworkLease | null> {
    return isSafeId(vmId) ? this.read(vmId) : null;
  }

  async put(lease: NetworkLease): Promise<void> {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const file = this.file(lease.vm_id);
    const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(lease, null, 2)}\n`, { mode: 0o600 });
    try {
      renameSync(temporary, file);
    } catch (error) {
      rmSync(temporary, { force: true });
      throw error;
    }
  }

  async remove(vmId: string): Promise<void> {
    rmSync(this.file(vmId), { force: true });
  }

  /** Whether the lease's machine directory is gone: then nothing holds it any more. */
  static abandoned(lease: NetworkLease): boolean {
    return !existsSync(join(lease.owner, lease.vm_id));
  }

  private read(vmId: string): NetworkLease | null {
    try {
      return withGroup(JSON.parse(readFileSync(this.file(vmId), 'utf8')) as NetworkLease);
    } catch {
      return null; // gone meanwhile, or not a lease
    }
  }

  private file(vmId: string): string {
    if (!isSafeId(vmId)) throw new Error(`invalid vm id ${JSON.stringify(vmId)}`);
    return join(this.dir, `${vmId}.json`);
  }
}

/**
 * The bridge is shared by every installation (and version of Arbor) on the host, so a lease may
 * have been written without a group (a machine not given to an org yet, in another version's
 * terms). Such a machine is a group of its own: it reaches no other machine, and a sweep neither
 * fails on it (a worker that cannot sweep cannot start) nor takes its addresses away.
 */
export function withGroup(lease: NetworkLease): NetworkLease {
  return typeof lease.group === 'string' ? lease : { ...lease, group: `no group: ${lease.vm_id}` };
}
