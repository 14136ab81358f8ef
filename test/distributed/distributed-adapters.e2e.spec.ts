import { PROJECTOR_CHECKPOINT } from '@arbor/application';
import { EventStoreDbEventStore } from '@arbor/event-store/eventstoredb';
import { startEsdbFake, type EsdbFake } from '@arbor/event-store/testing';
import { MongoReadModelStore } from '@arbor/read-models/mongodb';
import { startMongoFake, type MongoFake } from '@arbor/read-models/testing';
import { createPauseResumeDelete, distEntry, type ProcessTrio, startProcess, startProcessTrio, stopProcess } from '../support/processes';

/**
 * The distributed shape end to end: api, projector and vm-worker as separate processes (the built
 * entry points docker compose runs), each with its own data directory, sharing only the stores —
 * here the EventStoreDB and MongoDB adapters, talking over real sockets to the in-process fakes
 * (the `testing` folders of libs/event-store and libs/read-models). The fakes check our use of the two clients across processes (requests,
 * subscriptions, sessions and transactions as they cross the wire), not the servers' semantics:
 * run the contract suites with EVENTSTORE_URL/MONGODB_URL for those.
 */
describe('api, projector and vm-worker as separate processes on EventStoreDB + MongoDB (sandbox)', () => {
  let esdb: EsdbFake;
  let mongo: MongoFake;
  let stores: Record<string, string>;
  let trio: ProcessTrio;

  beforeAll(async () => {
    [esdb, mongo] = await Promise.all([startEsdbFake(), startMongoFake()]);
    stores = { EVENTSTORE_URL: esdb.connectionString, MONGODB_URL: mongo.url };
    trio = await startProcessTrio({ env: stores, dataDirs: 'separate' });
    for (const [process, adapters] of [
      [trio.api, /event store: EventStoreDB[\s\S]*read models: MongoDB/],
      [trio.projector, /event store: EventStoreDB[\s\S]*read models: MongoDB/],
      [trio.worker, /event store: EventStoreDB/],
    ] as const) {
      expect(process.output()).toMatch(adapters);
    }
  }, 320_000);

  afterAll(async () => {
    await trio?.stop();
    await Promise.all([esdb?.stop(), mongo?.stop()]);
  });

  it('creates (wait_boot), lists, pauses, resumes and deletes a real machine', async () => {
    await createPauseResumeDelete(trio, { via: 'esdb+mongo' }, {
      created: async (vmId) => {
        const listed = await trio.call('GET', '/api/v1/vms');
        expect(listed.status).toBe(200);
        expect(listed.json).toEqual(expect.arrayContaining([expect.objectContaining({ vm_id: vmId, state: 'running', labels: { via: 'esdb+mongo' } })]));
      },
      resumed: async (vmId) => expect(await trio.driver.status(vmId)).toBe('running'),
      deleted: async (vmId) => expect((await trio.call('GET', '/api/v1/vms')).json.map((vm: { vm_id: string }) => vm.vm_id)).not.toContain(vmId),
    });
  }, 120_000);

  it('serves the event feed from the beginning of the log (no after)', async () => {
    // Booted before the feed is read: the worker appends nothing more for it, so the feed is whole.
    const vmId = (await trio.call('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: {} })).json.vm_id;

    const feed = await trio.call('GET', '/api/v1/events?limit=1000');

    expect(feed.status).toBe(200);
    const events = new EventStoreDbEventStore(esdb.connectionString);
    const [oldest] = await events.readAll({ max_count: 1 });
    await events.close();
    expect(feed.json.events[0]).toMatchObject({ position: oldest.position, event_id: oldest.id });
    expect(feed.json.events).toContainEqual(expect.objectContaining({ stream_id: `vm-${vmId}`, type: 'VmCreationRequested' }));
    expect(feed.json.has_more).toBe(false);
  }, 60_000);

  it('rebuilds the read models from EventStoreDB into MongoDB with the rebuild entry point', async () => {
    await trio.call('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: { labels: { kept: 'yes' } } });
    const before = (await trio.call('GET', '/api/v1/vms')).json;
    await stopProcess(trio.projector); // the rebuild wants the projector stopped

    const rebuild = startProcess(distEntry('projector', 'rebuild.js'), { ...stores, ARBOR_DATA_DIR: trio.dirs.projector });
    expect(await rebuild.exited).toBe(0);

    const events = new EventStoreDbEventStore(esdb.connectionString);
    const readModels = await MongoReadModelStore.connect(mongo.url);
    try {
      const log = await events.readAll();
      expect(rebuild.output()).toContain(`rebuilt the read models from ${log.length} event(s)`);
      expect(await readModels.getCheckpoint(PROJECTOR_CHECKPOINT)).toBe(log[log.length - 1].position);
    } finally {
      await Promise.all([events.close(), readModels.close()]);
    }
    expect((await trio.call('GET', '/api/v1/vms')).json).toEqual(before);

    // The projector carries on from the rebuilt checkpoint: a new write becomes visible.
    await trio.startProjector();
    const next = await trio.call('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: {} });
    expect(next.status).toBe(201);
    expect((await trio.call('GET', '/api/v1/vms')).json).toHaveLength(before.length + 1);
  }, 120_000);
});
