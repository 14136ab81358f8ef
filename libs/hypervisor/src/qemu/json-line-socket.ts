import { connect, type Socket } from 'node:net';

/**
 * A unix socket carrying one JSON document per line (QMP and the guest agent both speak this).
 * 0xFF bytes are dropped: the guest agent sends one as a resynchronisation marker, and it can
 * never occur inside UTF-8 JSON.
 */
export class JsonLineSocket {
  private buffer = Buffer.alloc(0);
  private closedError: Error | null = null;
  private readonly closeListeners: ((error: Error) => void)[] = [];

  private constructor(
    private readonly socket: Socket,
    private readonly onMessage: (message: any) => void,
  ) {
    socket.on('data', (data) => this.receive(data));
    socket.on('error', () => undefined); // 'close' follows and reports it
    socket.on('close', () => {
      this.closedError = new Error('socket closed');
      for (const listener of this.closeListeners) listener(this.closedError);
    });
  }

  static open(path: string, onMessage: (message: any) => void): Promise<JsonLineSocket> {
    return new Promise((resolve, reject) => {
      const socket = connect(path);
      socket.once('error', reject);
      socket.once('connect', () => {
        socket.off('error', reject);
        resolve(new JsonLineSocket(socket, onMessage));
      });
    });
  }

  get closed(): boolean {
    return this.closedError !== null;
  }

  onClose(listener: (error: Error) => void): void {
    if (this.closedError) listener(this.closedError);
    else this.closeListeners.push(listener);
  }

  send(message: object): void {
    if (this.closedError) throw this.closedError;
    this.socket.write(`${JSON.stringify(message)}\n`);
  }

  close(): void {
    this.socket.destroy();
  }

  private receive(data: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, data]);
    for (;;) {
      const end = this.buffer.indexOf(0x0a);
      if (end < 0) return;
      const line = Buffer.from(this.buffer.subarray(0, end).filter((byte) => byte !== 0xff)).toString('utf8').trim();
      this.buffer = this.buffer.subarray(end + 1);
      if (!line) continue;
      let message: unknown;
      try {
        message = JSON.parse(line);
      } catch {
        continue; // a fragment left over from before a resync
      }
      this.onMessage(message);
    }
  }
}
