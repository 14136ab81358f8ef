import { randomUUID } from 'node:crypto';
import { describeEventStoreContract } from '../testing/event-store.contract';
import { InMemoryEventStore } from './in-memory-event-store';

const metadata = { schema_version: 1, correlation_id: 'c', causation_id: 'c', actor_key_id: null, org_id: null };

// Each test gets a store that already holds someone else's events, as a shared server would.
describeEventStoreContract('in-memory', async () => {
  const store = new InMemoryEventStore();
  await store.append(`other-${randomUUID()}`, [{ id: randomUUID(), type: 'Other', data: {}, metadata }], 'no_stream');
  return store;
});

describe('InMemoryEventStore specifics', () => {
  it('starts empty at head -1 and numbers positions from 0', async () => {
    const store = new InMemoryEventStore();
    expect(await store.headPosition()).toBe(-1);

    const result = await store.append('s', [{ id: randomUUID(), type: 'T', data: {}, metadata }], 'no_stream');

    expect(result).toEqual({ next_expected_revision: 0, position: 0 });
    expect(await store.headPosition()).toBe(0);
  });

  it('keeps stored events apart from the objects passed in and handed out', async () => {
    const store = new InMemoryEventStore();
    const data = { list: [1] };
    await store.append('s', [{ id: randomUUID(), type: 'T', data, metadata }], 'no_stream');

    data.list.push(2);
    const [read] = await store.readStream('s');
    (read.data as { list: number[] }).list.push(3);

    expect((await store.readStream('s'))[0].data).toEqual({ list: [1] });
  });
});
