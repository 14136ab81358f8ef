import { connect, type Socket } from 'node:net';

/**
 * The longest line taken: a guest-exec status carries up to 16 MiB of captured output (the agent's
 * own cap) as base64, about 21.3 MiB. Anything longer is no answer this client asked for, so the
 * connection is dropped rather than buffered without end.
 */
export const MAX_LINE_BYTES = 32 * 1024 * 1024;

/**
 * A unix socket carrying one JSON document per line (QMP and the guest agent both speak this).
 * 0xFF bytes are dropped: the guest agent sends one as a resynchronisation marker, and it can
 * never occur inside UTF-8 JSON.
 */
export class JsonLineSocket {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private closedError: Error | null = null;
  private readonly closeListeners: ((error: Error) => void)[] = [];

  private constructor(
    private readonly socket: Socket,
    private readonly onMessage: (message: any) => void,
  ) {
    socket.on('data', (data) => this.receive(data));
    socket.on('error', () => undefined); // 'close' follows and reports it
    socket.on('close', () => {
      this.closedError ??= new Error('socket closed');
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

  /**
   * Pieces of the line not yet ended are kept as they came and joined once, when its newline
   * arrives: re-joining the whole buffer on every read would cost quadratic time on a long line.
   */
  private receive(data: Buffer): void {
    let start = 0;
    for (let end = data.indexOf(0x0a); end >= 0; end = data.indexOf(0x0a, start)) {
      const line = Buffer.concat([...this.pending, data.subarray(start, end)]);
      this.pending = [];
      this.pendingBytes = 0;
      start = end + 1;
      this.handleLine(line);
    }
    if (start < data.length) {
      this.pending.push(data.subarray(start));
      this.pendingBytes += data.length - start;
    }
    if (this.pendingBytes > MAX_LINE_BYTES) {
      this.closedError = new Error(`a line longer than ${MAX_LINE_BYTES} bytes came in: connection dropped`);
      this.pending = [];
      this.pendingBytes = 0;
      this.socket.destroy();
    }
  }

  private handleLine(bytes: Buffer): void {
    const line = Buffer.from(bytes.filter((byte) => byte !== 0xff)).toString('utf8').trim();
    if (!line) return;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      return; // a fragment left over from before a resync
    }
    this.onMessage(message);
  }
}
