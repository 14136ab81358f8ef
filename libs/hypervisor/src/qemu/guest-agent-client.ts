import { randomInt } from 'node:crypto';
import { sleep } from '../host/sleep';
import { JsonLineSocket } from './json-line-socket';

/** An error the guest agent returned for a command. */
export class GuestAgentError extends Error {
  constructor(
    readonly command: string,
    readonly errorClass: string,
    readonly desc: string,
  ) {
    super(`guest agent ${command} failed: ${desc}`);
    this.name = 'GuestAgentError';
  }
}

/**
 * The QEMU guest agent over QEMU's unix socket for the virtio-serial port. The agent answers one
 * command at a time, so requests are queued. A connection starts with guest-sync-delimited to drop
 * whatever an earlier client (or the machine a snapshot was taken from) left half-sent; a request
 * that times out poisons the connection, and the next request reconnects.
 */
export class GuestAgentClient {
  private socket: JsonLineSocket | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private waiting: { resolve: (message: any) => void; reject: (error: Error) => void } | null = null;

  constructor(private readonly path: string) {}

  /**
   * Sends `command` and resolves with its return value. While a commit holds the file systems
   * frozen the agent refuses most commands: those wait for the thaw, behind it in the queue.
   */
  async request<T = any>(command: string, args?: object, timeoutMs = 0): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.enqueue<T>(command, args, timeoutMs);
      } catch (error) {
        if (!(error instanceof GuestAgentError && /frozen state/.test(error.desc)) || attempt >= 600) throw error;
        await sleep(50);
      }
    }
  }

  private enqueue<T>(command: string, args: object | undefined, timeoutMs: number): Promise<T> {
    const run = this.queue.then(() => this.send<T>(command, args, timeoutMs));
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Waits until the agent answers guest-ping (the guest has booted), or fails after `timeoutMs`. */
  async waitUntilReady(timeoutMs: number, stillAlive: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let lastError: unknown = null;
    while (Date.now() < deadline) {
      if (!(await stillAlive())) throw new Error('QEMU exited before the guest agent answered');
      try {
        await this.request('guest-ping', undefined, 2000);
        return;
      } catch (error) {
        lastError = error;
        await sleep(100);
      }
    }
    throw new Error(`guest agent did not answer within ${timeoutMs} ms: ${String(lastError)}`);
  }

  close(): void {
    this.socket?.close();
    this.socket = null;
  }

  private async send<T>(command: string, args: object | undefined, timeoutMs: number): Promise<T> {
    const socket = await this.connected(timeoutMs);
    const reply = await this.exchange(socket, args ? { execute: command, arguments: args } : { execute: command }, timeoutMs);
    if (reply.error) throw new GuestAgentError(command, reply.error.class, reply.error.desc);
    return reply.return as T;
  }

  private async connected(timeoutMs: number): Promise<JsonLineSocket> {
    if (this.socket && !this.socket.closed) return this.socket;
    // Only the current connection may settle a request: an abandoned one's late close must not.
    const socket: JsonLineSocket = await JsonLineSocket.open(this.path, (message) => {
      if (this.socket === socket) this.settle((waiting) => waiting.resolve(message));
    });
    socket.onClose((error) => {
      if (this.socket === socket) this.settle((waiting) => waiting.reject(error));
    });
    this.socket = socket;
    const id = randomInt(1, 2 ** 31);
    // Earlier replies may still arrive before the sync's own: skip until the one echoing our id.
    let reply = await this.exchange(socket, { execute: 'guest-sync-delimited', arguments: { id } }, timeoutMs);
    while (reply.return !== id) reply = await this.next(socket, timeoutMs);
    return socket;
  }

  private exchange(socket: JsonLineSocket, message: object, timeoutMs: number): Promise<any> {
    const reply = this.next(socket, timeoutMs);
    socket.send(message);
    return reply;
  }

  private next(socket: JsonLineSocket, timeoutMs: number): Promise<any> {
    return new Promise((resolve, reject) => {
      const timer =
        timeoutMs > 0
          ? setTimeout(() => {
              this.waiting = null;
              socket.close(); // a late reply would be taken for the next request's: start over
              reject(new Error(`guest agent did not reply within ${timeoutMs} ms`));
            }, timeoutMs)
          : null;
      const done = () => timer && clearTimeout(timer);
      this.waiting = {
        resolve: (message) => (done(), resolve(message)),
        reject: (error) => (done(), reject(error)),
      };
    });
  }

  private settle(action: (waiting: NonNullable<GuestAgentClient['waiting']>) => void): void {
    const waiting = this.waiting;
    this.waiting = null;
    if (waiting) action(waiting);
  }
}
