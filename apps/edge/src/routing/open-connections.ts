import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/** How long a lasting connection's VM side may stay silent before TCP keepalive probes it. */
export const KEEPALIVE_IDLE_MS = 30_000;

export interface OpenConnection {
  vm_id: string;
  domain: string | null;
  sockets: Duplex[];
  /** Its socket to the VM, once connected. */
  upstream: Socket | null;
  /** How many keepalive sweeps have found it open. */
  sweeps: number;
}

/**
 * The connections this edge holds open, by VM and by custom domain, so that a VM's deletion (or
 * a domain's removal) ends them at once instead of leaving a path into a machine that is going.
 */
export class OpenConnections {
  private readonly open = new Set<OpenConnection>();

  get size(): number {
    return this.open.size;
  }

  /** Tracks a proxied connection, from its client's socket on, until it closes. */
  add(vm_id: string, domain: string | null, client: Duplex): OpenConnection {
    const connection: OpenConnection = { vm_id, domain, sockets: [], upstream: null, sweeps: 0 };
    this.open.add(connection);
    this.track(connection, client);
    return connection;
  }

  /** The connection's VM side, closed with it. */
  attach(connection: OpenConnection, upstream: Socket): void {
    connection.upstream = upstream;
    this.track(connection, upstream);
  }

  /**
   * TCP keepalive, so that a VM side gone without a word is found, on the connections open for a
   * whole sweep period (called every KEEPALIVE_IDLE_MS): set here rather than per connection, a
   * short request pays none of its system calls, and a lasting one is probed after 60–90 s of
   * silence.
   */
  keepAliveLasting(): void {
    for (const connection of this.open) {
      if (connection.sweeps++ === 1) connection.upstream?.setKeepAlive(true, KEEPALIVE_IDLE_MS);
    }
  }

  private track(connection: OpenConnection, socket: Duplex): void {
    connection.sockets.push(socket);
    socket.on('close', () => this.open.delete(connection));
  }

  closeVm(vm_id: string): number {
    return this.closeWhere((connection) => connection.vm_id === vm_id);
  }

  closeDomain(domain: string): number {
    return this.closeWhere((connection) => connection.domain === domain);
  }

  closeAll(): void {
    this.closeWhere(() => true);
  }

  private closeWhere(matches: (connection: OpenConnection) => boolean): number {
    let closed = 0;
    for (const connection of [...this.open]) {
      if (!matches(connection)) continue;
      this.open.delete(connection);
      connection.sockets.forEach((socket) => socket.destroy());
      closed++;
    }
    return closed;
  }
}
