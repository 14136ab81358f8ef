/** One Server-Sent Events message as a client dispatches it. */
export interface SseMessage {
  id: string;
  event: string;
  data: string;
}

export interface SseFollowerOptions {
  key: string;
  /** Sent as Last-Event-ID on the first connection (reconnects send the last id seen). */
  lastEventId?: string;
  /** Wait before reconnecting after the stream ended or failed (EventSource's `retry`). */
  retryMs?: number;
}

/**
 * A reconnecting SSE client as EventSource behaves (which Node lacks), with a bearer key: it
 * parses the stream by the spec (an `id:` field sets the last event id even when no message is
 * dispatched), and after the stream ends or fails it connects again with Last-Event-ID.
 */
export class SseFollower {
  readonly messages: SseMessage[] = [];
  readonly comments: string[] = [];
  /** The HTTP statuses of the connections made, in order (0: could not connect). */
  readonly connections: number[] = [];
  lastEventId: string;
  private readonly controller = new AbortController();
  private readonly done: Promise<void>;
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly url: string,
    private readonly options: SseFollowerOptions,
  ) {
    this.lastEventId = options.lastEventId ?? '';
    this.done = this.run();
  }

  /** Resolves once `condition` holds (checked as messages and comments arrive); rejects after `timeoutMs`. */
  until(condition: (follower: this) => boolean, timeoutMs = 60_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!condition(this)) return;
        clearTimeout(timer);
        this.listeners.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.listeners.delete(check);
        reject(new Error(`SSE condition not met in ${timeoutMs} ms (${this.messages.length} messages, connections ${this.connections.join(',')})`));
      }, timeoutMs);
      this.listeners.add(check);
      check();
    });
  }

  async close(): Promise<void> {
    this.controller.abort();
    await this.done;
  }

  private async run(): Promise<void> {
    while (!this.controller.signal.aborted) {
      try {
        await this.connect();
      } catch {
        // refused, reset or cut off: reconnect, as EventSource does
      }
      if (!this.controller.signal.aborted) await new Promise((resolve) => setTimeout(resolve, this.options.retryMs ?? 100));
    }
  }

  private async connect(): Promise<void> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.options.key}`, accept: 'text/event-stream' };
    if (this.lastEventId) headers['last-event-id'] = this.lastEventId;
    let response: Response;
    try {
      response = await fetch(this.url, { headers, signal: this.controller.signal });
    } catch (error) {
      this.connections.push(0);
      throw error;
    }
    this.connections.push(response.status);
    this.notify();
    if (response.status !== 200 || !response.body) {
      await response.text();
      return;
    }
    const decoder = new TextDecoder();
    let buffered = '';
    let block = { id: null as string | null, event: '', data: [] as string[] };
    for await (const chunk of response.body) {
      buffered += decoder.decode(chunk, { stream: true });
      const lines = buffered.split(/\r\n|\r|\n/);
      buffered = lines.pop()!;
      for (const line of lines) {
        if (line === '') {
          if (block.id !== null) this.lastEventId = block.id;
          if (block.data.length) this.messages.push({ id: this.lastEventId, event: block.event || 'message', data: block.data.join('\n') });
          block = { id: null, event: '', data: [] };
          continue;
        }
        if (line.startsWith(':')) {
          this.comments.push(line.slice(1).trim());
          continue;
        }
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'id') block.id = value;
        else if (field === 'event') block.event = value;
        else if (field === 'data') block.data.push(value);
      }
      this.notify();
    }
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }
}
