import { randomUUID } from 'node:crypto';
import {
  type EventMetadata,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type RecordedEvent,
  WrongExpectedVersionError,
} from '../event-store.port';

/** How long a subscription may take to deliver what the test appended before the test gives up. */
const DELIVERY_GUARD_MS = 15_000;

/**
 * The behaviour every EventStore adapter shares. The store may be a shared server that already
 * holds (and keeps receiving) other events: every test writes to its own streams, filters $all
 * to them and reasons only about positions it observed itself. Positions need not be dense.
 * Each test opens its own store; the suite closes it.
 */
export function describeEventStoreContract(adapterName: string, open: () => Promise<EventStore>): void {
  describe(`EventStore contract: ${adapterName}`, () => {
    let store: EventStore;

    beforeEach(async () => {
      store = await open();
    });

    afterEach(async () => {
      await store?.close();
    });

    const ownEvents = (events: RecordedEvent[], ...streams: string[]) => events.filter((event) => streams.includes(event.stream_id));
    const ids = (events: { id: string }[]) => events.map((event) => event.id);
    const revisions = (events: RecordedEvent[]) => events.map((event) => event.revision);
    const positions = (events: RecordedEvent[]) => events.map((event) => event.position);
    /** Appends `count` fresh events and returns them with the append's result. */
    const appendNew = async (stream: string, count: number, expected: ExpectedRevision) => {
      const events = newEvents(count);
      return { events, result: await store.append(stream, events, expected) };
    };
    const appendError = (stream: string, events: NewEvent[], expected: ExpectedRevision) =>
      store.append(stream, events, expected).then(
        () => new Error('expected the append to fail'),
        (error: unknown) => error,
      );

    describe('append and expected revisions', () => {
      it('creates a stream with no_stream: revisions from 0, the result names the last event', async () => {
        const stream = newStreamId();
        const { events, result } = await appendNew(stream, 2, 'no_stream');

        const read = await store.readStream(stream);
        expect(ids(read)).toEqual(ids(events));
        expect(revisions(read)).toEqual([0, 1]);
        expect(read.every((event) => event.stream_id === stream)).toBe(true);
        expect(result).toEqual({ next_expected_revision: 1, position: read[1].position });
      });

      it('rejects no_stream on an existing stream, naming the current revision as actual', async () => {
        const stream = newStreamId();
        await appendNew(stream, 2, 'no_stream');

        const error = await appendError(stream, newEvents(1), 'no_stream');

        expect(error).toBeInstanceOf(WrongExpectedVersionError);
        expect(error).toMatchObject({ stream_id: stream, expected: 'no_stream', actual: 1 });
        expect(await store.readStream(stream)).toHaveLength(2);
      });

      it('accepts stream_exists only when the stream exists', async () => {
        const stream = newStreamId();

        const error = await appendError(stream, newEvents(1), 'stream_exists');
        expect(error).toBeInstanceOf(WrongExpectedVersionError);
        expect(error).toMatchObject({ stream_id: stream, expected: 'stream_exists', actual: 'no_stream' });
        expect(await store.readStream(stream)).toEqual([]);

        await appendNew(stream, 1, 'no_stream');
        const { result } = await appendNew(stream, 1, 'stream_exists');
        expect(result.next_expected_revision).toBe(1);
      });

      it('accepts an exact revision only when it is the current one', async () => {
        const stream = newStreamId();
        await appendNew(stream, 2, 'no_stream');

        const { result } = await appendNew(stream, 1, 1);
        expect(result.next_expected_revision).toBe(2);

        for (const stale of [0, 1, 3, 10]) {
          const error = await appendError(stream, newEvents(1), stale);
          expect(error).toBeInstanceOf(WrongExpectedVersionError);
          expect(error).toMatchObject({ stream_id: stream, expected: stale, actual: 2 });
        }
        expect(revisions(await store.readStream(stream))).toEqual([0, 1, 2]);
      });

      it('rejects an exact revision on a missing stream with actual no_stream', async () => {
        const stream = newStreamId();

        const error = await appendError(stream, newEvents(1), 0);

        expect(error).toBeInstanceOf(WrongExpectedVersionError);
        expect(error).toMatchObject({ stream_id: stream, expected: 0, actual: 'no_stream' });
        expect(await store.readStream(stream)).toEqual([]);
      });

      it('appends with any whether or not the stream exists', async () => {
        const stream = newStreamId();
        const first = await appendNew(stream, 1, 'any');
        const second = await appendNew(stream, 2, 'any');

        expect(first.result.next_expected_revision).toBe(0);
        expect(second.result.next_expected_revision).toBe(2);
        expect(ids(await store.readStream(stream))).toEqual([...ids(first.events), ...ids(second.events)]);
      });

      it('appends a batch atomically: consecutive revisions, increasing positions, the last one returned', async () => {
        const stream = newStreamId();
        const before = await store.headPosition();
        const { events, result } = await appendNew(stream, 5, 'no_stream');

        const read = await store.readStream(stream);
        expect(ids(read)).toEqual(ids(events));
        expect(revisions(read)).toEqual([0, 1, 2, 3, 4]);
        expectStrictlyIncreasing(positions(read));
        expect(read[0].position).toBeGreaterThan(before);
        expect(result.position).toBe(read[4].position);
      });

      it('appends nothing of a batch that fails its expected revision', async () => {
        const stream = newStreamId();
        await appendNew(stream, 1, 'no_stream');
        const head = await store.headPosition();

        const error = await appendError(stream, newEvents(3), 5);

        expect(error).toBeInstanceOf(WrongExpectedVersionError);
        expect(await store.readStream(stream)).toHaveLength(1);
        expect(ownEvents(await store.readAll({ after_position: head }), stream)).toEqual([]);
      });

      it('rejects an empty append with an Error and creates nothing', async () => {
        const stream = newStreamId();

        const error = await appendError(stream, [], 'any');

        expect(error).toBeInstanceOf(Error);
        expect(error).not.toBeInstanceOf(WrongExpectedVersionError);
        expect(await store.readStream(stream)).toEqual([]);
      });

      it('lets exactly one of several concurrent appends with the same exact revision win', async () => {
        const stream = newStreamId();
        await appendNew(stream, 1, 'no_stream');
        const contenders = Array.from({ length: 5 }, () => newEvents(2));

        const outcomes = await Promise.allSettled(contenders.map((events) => store.append(stream, events, 0)));

        const winners = outcomes.flatMap((outcome, index) => (outcome.status === 'fulfilled' ? [contenders[index]] : []));
        const losers = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason] : []));
        expect(winners).toHaveLength(1);
        expect(losers).toHaveLength(4);
        for (const error of losers) {
          expect(error).toBeInstanceOf(WrongExpectedVersionError);
          expect(error).toMatchObject({ actual: 2 });
        }
        expect(ids(await store.readStream(stream, { from_revision: 1 }))).toEqual(ids(winners[0]));
      });

      it('lets exactly one of several concurrent no_stream appends create the stream', async () => {
        const stream = newStreamId();
        const outcomes = await Promise.allSettled(Array.from({ length: 4 }, () => store.append(stream, newEvents(1), 'no_stream')));

        expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
        expect(await store.readStream(stream)).toHaveLength(1);
      });
    });

    describe('idempotent retries (EventStoreDB semantics: same event ids where the append expected them)', () => {
      it('returns the first result and appends nothing when a no_stream batch is retried', async () => {
        const stream = newStreamId();
        const events = newEvents(2);
        const first = await store.append(stream, events, 'no_stream');

        const retried = await store.append(stream, events, 'no_stream');

        expect(retried).toEqual(first);
        expect(ids(await store.readStream(stream))).toEqual(ids(events));
        expect(ownEvents(await store.readAll({ after_position: first.position }), stream)).toEqual([]);
      });

      it('returns the first result when a batch with an exact revision is retried', async () => {
        const stream = newStreamId();
        await appendNew(stream, 2, 'no_stream');
        const events = newEvents(2);
        const first = await store.append(stream, events, 1);

        const retried = await store.append(stream, events, 1);

        expect(retried).toEqual(first);
        expect(first.next_expected_revision).toBe(3);
        expect(await store.readStream(stream)).toHaveLength(4);
      });

      it('returns the first result for a retry even after the stream has moved on', async () => {
        const stream = newStreamId();
        const events = newEvents(1);
        const first = await store.append(stream, events, 'no_stream');
        await appendNew(stream, 2, 0);

        const retried = await store.append(stream, events, 'no_stream');

        expect(retried).toEqual(first);
        expect(await store.readStream(stream)).toHaveLength(3);
      });

      it('returns the first result when a batch appended with any is retried', async () => {
        const stream = newStreamId();
        const events = newEvents(2);
        const first = await store.append(stream, events, 'any');

        const retried = await store.append(stream, events, 'any');

        expect(retried).toEqual(first);
        expect(ids(await store.readStream(stream))).toEqual(ids(events));
      });

      it('rejects a batch that re-uses appended ids in a different batch, appending nothing', async () => {
        const stream = newStreamId();
        const [a, b] = newEvents(2);
        await store.append(stream, [a, b], 'no_stream');
        const [c] = newEvents(1);

        for (const mismatched of [[a, c], [b], [a, b, c]]) {
          const error = await appendError(stream, mismatched, 'no_stream');
          expect(error).toBeInstanceOf(WrongExpectedVersionError);
          expect(error).toMatchObject({ stream_id: stream, actual: 1 });
        }
        expect(ids(await store.readStream(stream))).toEqual(ids([a, b]));
      });
    });

    describe('readStream', () => {
      it('reads a missing stream as [] in both directions', async () => {
        const stream = newStreamId();
        expect(await store.readStream(stream)).toEqual([]);
        expect(await store.readStream(stream, { direction: 'backwards' })).toEqual([]);
        expect(await store.readStream(stream, { from_revision: 3, max_count: 2 })).toEqual([]);
      });

      it('reads forwards from a revision, at most max_count events', async () => {
        const stream = newStreamId();
        const { events } = await appendNew(stream, 6, 'no_stream');

        expect(ids(await store.readStream(stream, { direction: 'forwards' }))).toEqual(ids(events));
        expect(revisions(await store.readStream(stream, { from_revision: 2 }))).toEqual([2, 3, 4, 5]);
        expect(revisions(await store.readStream(stream, { from_revision: 2, max_count: 3 }))).toEqual([2, 3, 4]);
        expect(revisions(await store.readStream(stream, { max_count: 2 }))).toEqual([0, 1]);
        expect(await store.readStream(stream, { from_revision: 6 })).toEqual([]);
      });

      it('reads backwards from the end or from a revision, at most max_count events', async () => {
        const stream = newStreamId();
        await appendNew(stream, 6, 'no_stream');

        expect(revisions(await store.readStream(stream, { direction: 'backwards' }))).toEqual([5, 4, 3, 2, 1, 0]);
        expect(revisions(await store.readStream(stream, { direction: 'backwards', max_count: 1 }))).toEqual([5]);
        expect(revisions(await store.readStream(stream, { direction: 'backwards', from_revision: 3 }))).toEqual([3, 2, 1, 0]);
        expect(revisions(await store.readStream(stream, { direction: 'backwards', from_revision: 3, max_count: 2 }))).toEqual([3, 2]);
      });

      it('round-trips data and metadata exactly (nested JSON, unicode) and records an ISO-8601 time', async () => {
        const stream = newStreamId();
        const data = {
          name: 'ünïcødé ✓ 日本語 🚀 "quoted" \\ back \n newline',
          count: 42,
          ratio: 0.25,
          negative: -7,
          large: 2 ** 40,
          on: true,
          off: false,
          nothing: null,
          tags: ['a', 'b'],
          empty: [],
          emptyObject: {},
          nested: { level: { list: [1, 'two', { three: 3 }, null], flag: false } },
        };
        const metadata: EventMetadata = {
          ...newMetadata(),
          actor_key_id: randomUUID(),
          org_id: 'örg-✓',
          extra: { trace: ['a', 1] },
        };
        const event: NewEvent = { id: randomUUID(), type: 'ContractDataRoundTripped', data, metadata };
        const before = await store.headPosition();
        const { position } = await store.append(stream, [event], 'no_stream');

        const [read] = await store.readStream(stream);
        expect(read).toEqual({ ...event, stream_id: stream, revision: 0, position, created_at: expect.any(String) });
        expect(read.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/);
        expect(Number.isNaN(Date.parse(read.created_at))).toBe(false);
        expect(ownEvents(await store.readAll({ after_position: before }), stream)).toEqual([read]);
      });
    });

    describe('readAll and headPosition', () => {
      it('reads forwards after a position with the positions append returned, strictly increasing', async () => {
        const [streamA, streamB] = [newStreamId(), newStreamId()];
        const before = await store.headPosition();
        const a1 = await appendNew(streamA, 2, 'no_stream');
        const b1 = await appendNew(streamB, 1, 'no_stream');
        const a2 = await appendNew(streamA, 1, 1);

        const all = await store.readAll({ after_position: before });
        expectStrictlyIncreasing(positions(all));
        expect(all.every((event) => event.position > before)).toBe(true);
        const own = ownEvents(all, streamA, streamB);
        expect(ids(own)).toEqual(ids([...a1.events, ...b1.events, ...a2.events]));
        expect(own.map((event) => [event.stream_id, event.revision])).toEqual([
          [streamA, 0],
          [streamA, 1],
          [streamB, 0],
          [streamA, 2],
        ]);
        expect([own[1].position, own[2].position, own[3].position]).toEqual([a1.result.position, b1.result.position, a2.result.position]);
      });

      it('reads forwards at most max_count events, starting right after after_position', async () => {
        const stream = newStreamId();
        const first = await appendNew(stream, 1, 'no_stream');
        const second = await appendNew(stream, 1, 0);

        const [next, ...rest] = await store.readAll({ after_position: first.result.position, max_count: 1 });

        expect(rest).toEqual([]);
        // Another writer may have slipped in between, so "the next event" is at most ours.
        expect(next.position).toBeGreaterThan(first.result.position);
        expect(next.position).toBeLessThanOrEqual(second.result.position);
        expect(await store.readAll({ after_position: first.result.position, max_count: 0 })).toEqual([]);
      });

      it('reads backwards before a position, strictly decreasing, at most max_count events', async () => {
        const stream = newStreamId();
        const before = await store.headPosition();
        const { events, result } = await appendNew(stream, 3, 'no_stream');
        const marker = await appendNew(stream, 1, 2);

        const backwards = await store.readAll({ direction: 'backwards', before_position: marker.result.position });
        const decreasing = positions(backwards);
        expectStrictlyIncreasing([...decreasing].reverse());
        expect(decreasing.every((position) => position < marker.result.position)).toBe(true);
        expect(ids(ownEvents(backwards, stream))).toEqual(ids(events).reverse());

        const [newest] = ownEvents(backwards, stream);
        expect(newest.position).toBe(result.position);
        const [previous, ...rest] = await store.readAll({ direction: 'backwards', before_position: result.position, max_count: 1 });
        expect(rest).toEqual([]);
        expect(previous.position).toBeLessThan(result.position);
        expect(previous.position).toBeGreaterThan(before);
      });

      it('readAllSerialized reads what readAll reads, each data as the JSON text it serializes to', async () => {
        const stream = newStreamId();
        const before = await store.headPosition();
        await appendNew(stream, 3, 'no_stream');

        for (const options of [{ after_position: before }, { after_position: before, max_count: 2 }, { direction: 'backwards' as const, max_count: 2 }]) {
          const parsed = await store.readAll(options);
          const serialized = await store.readAllSerialized(options);
          expect(serialized.map(({ data_json, ...envelope }) => ({ ...envelope, data: JSON.parse(data_json) }))).toEqual(parsed);
          expect(serialized.map((event) => event.data_json)).toEqual(parsed.map((event) => JSON.stringify(event.data)));
        }
      });

      it('reads backwards from the end of the log by default', async () => {
        const stream = newStreamId();
        const { result } = await appendNew(stream, 2, 'no_stream');

        const [latest] = await store.readAll({ direction: 'backwards', max_count: 1 });

        expect(latest.position).toBeGreaterThanOrEqual(result.position);
      });

      it('reads forwards from the beginning of the log by default', async () => {
        const stream = newStreamId();
        await appendNew(stream, 1, 'no_stream');

        const [oldest] = await store.readAll({ max_count: 1 });
        const [newest] = await store.readAll({ direction: 'backwards', max_count: 1 });

        expect(oldest.position).toBeLessThanOrEqual(newest.position);
        expect(await store.readAll({ direction: 'backwards', before_position: oldest.position, max_count: 1 })).toEqual([]);
      });

      it('reads from the beginning with after_position -1 (the head of an empty log), as without it', async () => {
        const stream = newStreamId();
        const { events } = await appendNew(stream, 2, 'no_stream');

        const [oldest] = await store.readAll({ max_count: 1 });
        const [first, ...rest] = await store.readAll({ after_position: -1, max_count: 1 });
        expect(rest).toEqual([]);
        expect(first).toEqual(oldest);
        expect(ids(ownEvents(await store.readAll({ after_position: -1 }), stream))).toEqual(ids(events));
      });

      it('reports the position of the last event as headPosition', async () => {
        const stream = newStreamId();
        const before = await store.headPosition();
        expect(before).toBeGreaterThanOrEqual(-1);

        const { result } = await appendNew(stream, 2, 'no_stream');
        const head = await store.headPosition();

        expect(head).toBeGreaterThan(before);
        expect(head).toBeGreaterThanOrEqual(result.position);
        const [last] = await store.readAll({ direction: 'backwards', max_count: 1 });
        expect(last.position).toBeGreaterThanOrEqual(head);
      });
    });

    describe('subscribeToAll', () => {
      it('catches up from a position, then delivers live appends in order, without duplicates or gaps', async () => {
        const [streamA, streamB] = [newStreamId(), newStreamId()];
        const earlier = await appendNew(streamA, 1, 'no_stream');
        const caughtUp = await appendNew(streamA, 2, 0);

        const subscription = store.subscribeToAll({ after_position: earlier.result.position });
        const iterator = subscription[Symbol.asyncIterator]();
        const catchUp = await collectUntil(iterator, caughtUp.result.position);
        // Caught up: this request waits for events that do not exist yet.
        const waiting = iterator.next();
        const live = [await appendNew(streamB, 2, 'no_stream'), await appendNew(streamA, 1, 2), await appendNew(streamB, 1, 1)];
        const lastPosition = live[live.length - 1].result.position;
        const delivered = [...catchUp, ...(await collectUntil(iterator, lastPosition, waiting))];
        await subscription.unsubscribe();

        expect(ids(ownEvents(delivered, streamA, streamB))).toEqual(ids([...caughtUp.events, ...live.flatMap((append) => append.events)]));
        expect(delivered.every((event) => event.position > earlier.result.position)).toBe(true);
        expectStrictlyIncreasing(positions(delivered));
        // No gaps: exactly what a read of the same range returns.
        const range = await store.readAll({ after_position: earlier.result.position });
        expect(ids(delivered)).toEqual(ids(range.filter((event) => event.position <= lastPosition)));
      });

      it('delivers concurrent appends to several streams once each, in position order', async () => {
        const streams = [newStreamId(), newStreamId(), newStreamId()];
        const start = await store.headPosition();
        const subscription = store.subscribeToAll({ after_position: start });
        const iterator = subscription[Symbol.asyncIterator]();
        const waiting = iterator.next();

        // Three appends of two events per stream, the streams racing each other.
        const appended = await Promise.all(
          streams.map(async (stream) => [
            await appendNew(stream, 2, 'no_stream'),
            await appendNew(stream, 2, 1),
            await appendNew(stream, 2, 3),
          ]),
        );
        const lastPosition = Math.max(...appended.flat().map((append) => append.result.position));
        const delivered = await collectUntil(iterator, lastPosition, waiting);
        await subscription.unsubscribe();

        const own = ownEvents(delivered, ...streams);
        expectStrictlyIncreasing(positions(delivered));
        expect([...ids(own)].sort()).toEqual(appended.flat().flatMap((append) => ids(append.events)).sort());
        for (const stream of streams) {
          expect(revisions(ownEvents(delivered, stream))).toEqual([0, 1, 2, 3, 4, 5]);
        }
      });

      it('starts at the beginning of the log without after_position', async () => {
        await appendNew(newStreamId(), 1, 'no_stream');
        const [oldest] = await store.readAll({ max_count: 1 });

        const subscription = store.subscribeToAll();
        const iterator = subscription[Symbol.asyncIterator]();
        const first = await withGuard(iterator.next(), 'the first event of the log');
        await subscription.unsubscribe();

        expect(first.done).toBe(false);
        expect((first.value as RecordedEvent).id).toBe(oldest.id);
        expect((first.value as RecordedEvent).position).toBe(oldest.position);
      });

      it('starts at the beginning of the log with after_position -1, as without it', async () => {
        await appendNew(newStreamId(), 1, 'no_stream');
        const [oldest] = await store.readAll({ max_count: 1 });

        const subscription = store.subscribeToAll({ after_position: -1 });
        const iterator = subscription[Symbol.asyncIterator]();
        const first = await withGuard(iterator.next(), 'the first event of the log');
        await subscription.unsubscribe();

        expect(first.done).toBe(false);
        expect(first.value).toEqual(oldest);
      });

      it('ends a pending iteration when unsubscribed, and unsubscribing twice is harmless', async () => {
        const subscription = store.subscribeToAll({ after_position: await store.headPosition() });
        const iterator = subscription[Symbol.asyncIterator]();
        const pending = iterator.next();

        await subscription.unsubscribe();
        await subscription.unsubscribe();

        // On a shared store another writer's event may still arrive first; the feed must end soon after.
        let next = await withGuard(pending, 'the end of the iteration');
        for (let extra = 0; !next.done && extra < 100; extra++) next = await withGuard(iterator.next(), 'the end of the iteration');
        expect(next.done).toBe(true);
      });

      it('stops the feed when a consumer breaks out of for await', async () => {
        const stream = newStreamId();
        const before = await store.headPosition();
        const { result } = await appendNew(stream, 3, 'no_stream');
        const subscription = store.subscribeToAll({ after_position: before });

        const seen: RecordedEvent[] = [];
        for await (const event of subscription) {
          seen.push(event);
          if (event.position >= result.position) break;
        }

        expect(seen[seen.length - 1].position).toBe(result.position);
        await expect(subscription.unsubscribe()).resolves.toBeUndefined();
      });

      it('ends pending subscriptions when the store closes', async () => {
        // A store of its own, so that the suite's store is closed once, as usual.
        const closing = await open();
        const subscription = closing.subscribeToAll({ after_position: await closing.headPosition() });
        const iterator = subscription[Symbol.asyncIterator]();
        const pending = iterator.next();

        await closing.close();

        let next = await withGuard(pending, 'the end of the iteration after close');
        for (let extra = 0; !next.done && extra < 100; extra++) next = await withGuard(iterator.next(), 'the end of the iteration after close');
        expect(next.done).toBe(true);
      });
    });

    describe('onAppended', () => {
      it('names each stream once its append succeeded, the events already readable; a refused append names nothing', async () => {
        const stream = newStreamId();
        const seen: { stream: string; readable: number }[] = [];
        const reads: Promise<void>[] = [];
        const stop = store.onAppended((appended) => {
          reads.push(store.readStream(appended).then((events) => void seen.push({ stream: appended, readable: events.length })));
        });
        await appendNew(stream, 2, 'no_stream');
        await appendError(stream, newEvents(1), 'no_stream');
        await appendNew(stream, 1, 1);
        stop();
        await appendNew(stream, 1, 2);
        await Promise.all(reads);
        expect(seen.filter((entry) => entry.stream === stream)).toEqual([
          { stream, readable: 2 },
          { stream, readable: 3 },
        ]);
      });
    });
  });
}

function newStreamId(): string {
  return `contract-${randomUUID()}`;
}

function newMetadata(): EventMetadata {
  return { schema_version: 1, correlation_id: randomUUID(), causation_id: randomUUID(), actor_key_id: null, org_id: 'org-contract' };
}

function newEvents(count: number): NewEvent[] {
  return Array.from({ length: count }, (_, index) => ({
    id: randomUUID(),
    type: 'ContractEventAppended',
    data: { index },
    metadata: newMetadata(),
  }));
}

function expectStrictlyIncreasing(values: number[]): void {
  values.slice(1).forEach((value, index) => expect(value).toBeGreaterThan(values[index]));
}

/** Fails with a message naming what never arrived, instead of hanging until the test timeout. */
async function withGuard<T>(promise: Promise<T>, awaited: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`subscription did not deliver ${awaited} within ${DELIVERY_GUARD_MS} ms`)), DELIVERY_GUARD_MS);
  });
  try {
    return await Promise.race([promise, guard]);
  } finally {
    clearTimeout(timer);
  }
}

/** Collects delivered events until one at or past `lastPosition` arrives, starting with a pending request if given. */
async function collectUntil(
  iterator: AsyncIterator<RecordedEvent>,
  lastPosition: number,
  pending?: Promise<IteratorResult<RecordedEvent>>,
): Promise<RecordedEvent[]> {
  const delivered: RecordedEvent[] = [];
  while (delivered.length === 0 || delivered[delivered.length - 1].position < lastPosition) {
    const next = await withGuard(pending ?? iterator.next(), `position ${lastPosition}`);
    pending = undefined;
    if (next.done) throw new Error(`subscription ended before position ${lastPosition}`);
    delivered.push(next.value);
  }
  return delivered;
}
