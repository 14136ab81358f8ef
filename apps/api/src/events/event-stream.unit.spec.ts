import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import type { ServerResponse } from 'node:http';
import { type AllSubscription, InMemoryEventStore, type NewEvent, type RecordedEvent } from '@arbor/event-store';
import { streamEvents } from './event-stream';
import { OpenStreams } from './open-streams';

const newEvent = (type = 'VmLabelsSet'): NewEvent => ({
  id: randomUUID(),
  type,
  data: { vm_id: 'v', labels: { note: 'x'.repeat(200) } },
  metadata: { schema_version: 1, correlation_id: randomUUID(), causation_id: randomUUID(), actor_key_id: null, org_id: 'org' },
});

/** A client's socket: takes writes into a small buffer and drains it only while `reading`. */
class FakeClient extends Writable {
  text = '';
  reading = false;
  private pending: (() => void) | undefined;
  constructor() {
    super({ highWaterMark: 1024, decodeStrings: false });
  }
  override _write(chunk: string, _encoding: string, done: () => void): void {
    this.text += chunk;
    if (this.reading) done();
    else this.pending = done;
  }
  read(): void {
    this.reading = true;
    this.pending?.();
    this.pending = undefined;
  }
  status() {
    return this;
  }
  setHeader() {
    return this;
  }
  flushHeaders() {}
  get ids(): number[] {
    return [...this.text.matchAll(/^id: (\d+)$/gm)].map((match) => Number(match[1]));
  }
}

/** The store, counting what the stream pulls from its subscriptions. */
function countingStore(store: InMemoryEventStore): { store: InMemoryEventStore; pulled: () => number } {
  let pulled = 0;
  const subscribe = store.subscribeToAll.bind(store);
  store.subscribeToAll = (options) => {
    const inner = subscribe(options);
    const counted: AllSubscription = {
      unsubscribe: () => inner.unsubscribe(),
      async *[Symbol.asyncIterator]() {
        for await (const event of inner) {
          pulled++;
          yield event;
        }
      },
    };
    return counted;
  };
  return { store, pulled: () => pulled };
}

const settle = (ms = 50) => new Promise((resolve) => setTimeout(resolve, ms));
const all = () => true;

describe('streamEvents (the live follow over SSE)', () => {
  it("reads the log only as fast as the client takes it, then catches up and follows", async () => {
    const { store, pulled } = countingStore(new InMemoryEventStore());
    for (let i = 0; i < 2000; i++) await store.append(`vm-${i % 10}`, [newEvent()], 'any');
    const client = new FakeClient();
    const stop = new AbortController();
    const streaming = streamEvents(store, client as unknown as ServerResponse, { after: -1, filter: all, heartbeatMs: 60_000, signal: stop.signal });
    try {
      await settle();
      // The client reads nothing: one message fills its buffer and the stream waits for it.
      expect(pulled()).toBeLessThanOrEqual(2);
      client.read();
      await settle();
      expect(client.ids).toEqual((await store.readAll()).map((event) => event.position));
      const { position } = await store.append('vm-0', [newEvent()], 'any');
      await settle();
      expect(client.ids.at(-1)).toBe(position);
    } finally {
      stop.abort();
      await streaming;
    }
    expect(client.writableEnded).toBe(true);
  });

  it('cuts off a client that reads nothing for the stall time', async () => {
    const store = new InMemoryEventStore();
    for (let i = 0; i < 100; i++) await store.append('vm-1', [newEvent()], 'any');
    const client = new FakeClient();
    await streamEvents(store, client as unknown as ServerResponse, { after: -1, filter: all, heartbeatMs: 60_000, signal: new AbortController().signal, stallMs: 30 });
    expect(client.destroyed).toBe(true);
  });

  it('sends heartbeats on a quiet stream, with the id of events the filter passed over', async () => {
    const store = new InMemoryEventStore();
    const client = new FakeClient();
    client.read();
    const stop = new AbortController();
    const onlyBooted = (event: Pick<RecordedEvent, 'type'>) => event.type === 'VmBooted';
    const streaming = streamEvents(store, client as unknown as ServerResponse, { after: -1, filter: onlyBooted, heartbeatMs: 20, signal: stop.signal });
    try {
      await settle(60);
      expect(client.text).toContain(': heartbeat\n\n');
      const { position } = await store.append('vm-1', [newEvent(), newEvent()], 'any');
      await settle(60);
      expect(client.text).toContain(`: heartbeat\nid: ${position}\n\n`);
      expect(client.text).not.toContain('data:');
    } finally {
      stop.abort();
      await streaming;
    }
  });

  it('ends when its client goes away, and every open stream ends when the api shuts down', async () => {
    const store = new InMemoryEventStore();
    const streams = new OpenStreams();
    const follow = (client: FakeClient) => {
      client.read();
      return streamEvents(store, client as unknown as ServerResponse, { after: -1, filter: all, heartbeatMs: 60_000, signal: streams.start(client as unknown as ServerResponse) });
    };
    const leaving = new FakeClient();
    const left = follow(leaving);
    const staying = [new FakeClient(), new FakeClient()];
    const stayed = staying.map(follow);
    await settle();
    leaving.destroy();
    await left;
    streams.beforeApplicationShutdown();
    await Promise.all(stayed);
    expect(staying.every((client) => client.writableEnded)).toBe(true);
  });
});
