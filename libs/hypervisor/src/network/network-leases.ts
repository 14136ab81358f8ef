import { existsSync } from 'node:fs';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { readJsonFile, writeJsonAtomic } from '@arbor/durable-files';
import { isSafeId } from '../host/safe-id';

/**
 * Where the host's network registry lives: in /run, like the kernel state it describes (bridge,
 * interfaces, namespaces, nftables rules), so both go with a reboot and never disagree after one.
 */
export const NETWORK_REGISTRY_DIR = '/run/arbor/network';

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
   * org). null: a machine of no group, which reaches no machine and no machine reaches (a warm
   * machine waiting to be claimed; it joins its group with its owner).
   */
  group: string | null;
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
  constructor(readonly dir: string) {}

  async all(): Promise<NetworkLease[]> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    const leases = await Promise.all(names.filter((name) => name.endsWith('.json')).map((name) => this.read(name.slice(0, -5))));
    return leases.filter((lease): lease is NetworkLease => lease !== null);
  }

  async get(vmId: string): Promise<NetworkLease | null> {
    return isSafeId(vmId) ? this.read(vmId) : null;
  }

  async put(lease: NetworkLease): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await writeJsonAtomic(this.file(lease.vm_id), lease);
  }

  async remove(vmId: string): Promise<void> {
    await rm(this.file(vmId), { force: true });
  }

  /** Whether the lease's machine directory is gone: then nothing holds it any more. */
  static abandoned(lease: NetworkLease): boolean {
    return !existsSync(join(lease.owner, lease.vm_id));
  }

  private read(vmId: string): Promise<NetworkLease | null> {
    return readJsonFile<NetworkLease>(this.file(vmId)).catch(() => null);
  }

  private file(vmId: string): string {
    if (!isSafeId(vmId)) throw new Error(`invalid vm id ${JSON.stringify(vmId)}`);
    return join(this.dir, `${vmId}.json`);
  }
}
