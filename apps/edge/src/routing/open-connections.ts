import type { Duplex } from 'node:stream';

export interface OpenConnection {
  vm_id: string;
  domain: string | null;
  sockets: Duplex[];
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
    const connection: OpenConnection = { vm_id, domain, sockets: [] };
    this.open.add(connection);
    this.attach(connection, client);
    return connection;
  }

  /** One more socket of the connection (its VM side), closed with it. */
  attach(connection: OpenConnection, socket: Duplex): void {
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
