import { execFileSync } from 'node:child_process';
import { createServer, type Server, type Socket } from 'node:net';

/**
 * Services listening on a VM's own address on this host, for edge tests whose VMs have no
 * machine (the in-memory driver): the VM's IPv6 address (`ip` in its metadata) is put on the
 * loopback interface, so the edge reaches "the VM" exactly where it would reach a real one.
 * Needs root; close() removes the servers and the address.
 */
export class VmAddressServices {
  private readonly servers: Server[] = [];
  private readonly sockets = new Set<Socket>();

  private constructor(readonly address: string) {}

  static add(address: string): VmAddressServices {
    execFileSync('ip', ['-6', 'addr', 'add', `${address}/128`, 'dev', 'lo', 'nodad']);
    return new VmAddressServices(address);
  }

  /** A TCP service on `port` of the address: `onConnection` gets each client socket. */
  async listen(port: number, onConnection: (socket: Socket) => void): Promise<void> {
    const server = createServer((socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
      socket.on('error', () => socket.destroy());
      onConnection(socket);
    });
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, this.address, () => resolve()));
    this.servers.push(server);
  }

  /** Open connections to the services right now. */
  get connections(): number {
    return this.sockets.size;
  }

  async close(): Promise<void> {
    this.sockets.forEach((socket) => socket.destroy());
    await Promise.all(this.servers.map((server) => new Promise((resolve) => server.close(resolve))));
    execFileSync('ip', ['-6', 'addr', 'del', `${this.address}/128`, 'dev', 'lo']);
  }
}

/** An SSH server's first words: what the edge's SSH route must carry back. */
export const FAKE_SSH_BANNER = 'SSH-2.0-OpenSSH_9.2p1 fake-vm\r\n';

/** Answers like an SSH server (banner first, then echoes the client's lines back, prefixed). */
export function fakeSsh(socket: Socket): void {
  socket.write(FAKE_SSH_BANNER);
  socket.on('data', (data) => socket.write(`echo:${data.toString()}`));
}

/** A tiny HTTP/1.1 server: answers every request with its method, path and Host, and the port it came in on. */
export function fakeHttp(port: number) {
  return (socket: Socket): void => {
    let buffered = '';
    socket.on('data', (data) => {
      buffered += data.toString('latin1');
      let end: number;
      while ((end = buffered.indexOf('\r\n\r\n')) >= 0) {
        const head = buffered.slice(0, end);
        buffered = buffered.slice(end + 4);
        const [method, path] = head.split(' ');
        const host = /\r\nhost:\s*([^\r\n]*)/i.exec(head)?.[1] ?? '';
        const body = JSON.stringify({ port, method, path, host });
        socket.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      }
    });
  };
}
