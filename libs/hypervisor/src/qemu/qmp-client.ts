import { JsonLineSocket } from './json-line-socket';

interface Pending {
  resolve: (value: any) => void;
  reject: (error: Error) => void;
}

/** An error QEMU returned for a QMP command. */
export class QmpError extends Error {
  constructor(
    readonly command: string,
    readonly errorClass: string,
    readonly desc: string,
  ) {
    super(`QMP ${command} failed: ${desc}`);
    this.name = 'QmpError';
  }
}

/** A QEMU Machine Protocol connection: greeting + qmp_capabilities, then id-matched commands. */
export class QmpClient {
  private nextId = 1;
  private readonly pending = new Map<string, Pending & { command: string }>();
  private readonly eventListeners = new Set<(event: { event: string; data?: any }) => void>();
  private socket!: JsonLineSocket;

  static async connect(path: string): Promise<QmpClient> {
    const client = new QmpClient();
    let greeted!: () => void;
    const greeting = new Promise<void>((resolve) => (greeted = resolve));
    client.socket = await JsonLineSocket.open(path, (message) => {
      if (message.QMP) greeted();
      else client.receive(message);
    });
    client.socket.onClose((error) => {
      for (const pending of client.pending.values()) pending.reject(error);
      client.pending.clear();
    });
    await greeting;
    await client.execute('qmp_capabilities');
    return client;
  }

  get closed(): boolean {
    return this.socket.closed;
  }

  execute<T = any>(command: string, args?: object): Promise<T> {
    const id = `arbor-${this.nextId++}`;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve, reject, command });
      try {
        this.socket.send(args ? { execute: command, arguments: args, id } : { execute: command, id });
      } catch (error) {
        this.pending.delete(id);
        reject(error as Error);
      }
    });
  }

  /** Resolves with the first event named `name` (after this call) that satisfies `accept`. */
  waitForEvent(name: string, accept: (data: any) => boolean = () => true): Promise<any> {
    return new Promise((resolve, reject) => {
      const listener = (event: { event: string; data?: any }) => {
        if (event.event !== name || !accept(event.data)) return;
        this.eventListeners.delete(listener);
        resolve(event.data);
      };
      this.eventListeners.add(listener);
      this.socket.onClose((error) => {
        if (this.eventListeners.delete(listener)) reject(error);
      });
    });
  }

  close(): void {
    this.socket.close();
  }

  private receive(message: any): void {
    if (message.event) {
      for (const listener of [...this.eventListeners]) listener(message);
      return;
    }
    const pending = this.pending.get(message.id);
    if (!pending) return;
    this.pending.delete(message.id);
    if (message.error) pending.reject(new QmpError(pending.command, message.error.class, message.error.desc));
    else pending.resolve(message.return);
  }
}
