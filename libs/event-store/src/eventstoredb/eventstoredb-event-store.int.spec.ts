/**
 * The EventStoreDB adapter against the shared contract suite, twice:
 * - against the in-process gRPC fake (always): the REAL `@eventstore/db-client` over a real localhost
 *   socket. This checks OUR USE OF THE CLIENT (requests, error mapping, paging, subscriptions), not
 *   EventStoreDB's semantics: the fake's concurrency and idempotency rules are our reading of the
 *   server's, so only the real-server run below can confirm them;
 * - against a real server, only when EVENTSTORE_URL is set (e.g. `esdb://localhost:2113?tls=false`);
 *   otherwise that run is reported as skipped, with the reason.
 */
import { randomUUID } from 'node:crypto';
import { EventStoreDBClient, jsonEvent } from '@eventstore/db-client';
import { EventMetadata, EventStore, NewEvent } from '../event-store.port';
import { describeEventStoreContract } from '../testing/event-store.contract';
import { EsdbFake, startEsdbFake } from '../testing/esdb-fake';
import { EventStoreDbEventStore } from './eventstoredb-event-store';

const fakeName = 'eventstoredb (in-process gRPC fake: checks our use of the client, not server semantics)';
let fake: EsdbFake;
beforeAll(async () => {
  fake = await startEsdbFake();
});
afterAll(async () => {
  await fake?.stop();
});

describeEventStoreContract(fakeName, async () => new EventStoreDbEventStore(fake.connectionString));
describeAdapterSpecifics(fakeName, () => fake.connectionString);

const realServerUrl = process.env.EVENTSTORE_URL;
if (realServerUrl) {
  describeEventStoreContract('eventstoredb (real server)', async () => new EventStoreDbEventStore(realServerUrl));
  describeAdapterSpecifics('eventstoredb (real server)', () => realServerUrl);
} else {
  const reason = 'EVENTSTORE_URL is not set';
  console.warn(`EventStore contract: eventstoredb (real server) — skipped: ${reason}`);
  describe.skip(`EventStore contract: eventstoredb (real server) — skipped: ${reason}`, () => {
    it('runs the event store contract against a real EventStoreDB', () => undefined);
  });
}

/** What only this adapter has to get right: a real server's log also holds its own ($) events. */
function describeAdapterSpecifics(name: string, connectionString: () => string): void {
  describe(`EventStoreDbEventStore specifics: ${name}`, () => {
    let store: EventStore;
    let client: EventStoreDBClient;
    beforeEach(() => {
      store = new EventStoreDbEventStore(connectionString());
      client = EventStoreDBClient.connectionString(connectionString());
    });
    afterEach(async () => {
      await store.close();
      await client.dispose();
    });

    /** Writes events the way the server writes its own: $-prefixed stream and type. */
    const appendSystemEvents = (count: number) =>
      client.appendToStream(
        `$arbor-test-${randomUUID()}`,
        Array.from({ length: count }, () => jsonEvent({ type: '$statsCollected', data: { count } })),
      );

    it('hides system events from readAll, headPosition and subscribeToAll', async () => {
      const stream = `vm-${randomUUID()}`;
      const first = await store.append(stream, [newEvent('VmCreated')], 'no_stream');
      await appendSystemEvents(3);

      expect(await store.readAll({ after_position: first.position })).toEqual([]);
      expect(await store.headPosition()).toBe(first.position);

      const subscription = store.subscribeToAll({ after_position: first.position });
      const second = await store.append(stream, [newEvent('VmBooted')], 0);
      const delivered = [];
      for await (const event of subscription) {
        delivered.push(event);
        if (event.position >= second.position) break;
      }
      expect(delivered.map((event) => [event.stream_id, event.type])).toEqual([[stream, 'VmBooted']]);
    });

    it('pages past runs of system events longer than one page, in both directions', async () => {
      const stream = `vm-${randomUUID()}`;
      const before = await store.append(stream, [newEvent('VmCreated')], 'no_stream');
      await appendSystemEvents(150);
      const after = await store.append(stream, [newEvent('VmBooted')], 0);

      const forwards = await store.readAll({ after_position: before.position, max_count: 1 });
      expect(forwards.map((event) => event.position)).toEqual([after.position]);
      const backwards = await store.readAll({ direction: 'backwards', before_position: after.position, max_count: 1 });
      expect(backwards.map((event) => event.position)).toEqual([before.position]);
    });

    it("records the server's time of the append as created_at", async () => {
      const stream = `vm-${randomUUID()}`;
      const startedAt = Date.now();
      await store.append(stream, [newEvent('VmCreated')], 'no_stream');

      const [read] = await store.readStream(stream);
      // Within a minute of the append (allowing for clock skew with a real server), not a default.
      expect(Math.abs(Date.parse(read.created_at) - startedAt)).toBeLessThan(60_000);
    });
  });
}

function newEvent(type: string): NewEvent {
  const metadata: EventMetadata = {
    schema_version: 1,
    correlation_id: randomUUID(),
    causation_id: randomUUID(),
    actor_key_id: null,
    org_id: 'org-test',
  };
  return { id: randomUUID(), type, data: { type }, metadata };
}
