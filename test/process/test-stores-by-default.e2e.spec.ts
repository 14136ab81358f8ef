import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECTOR_CHECKPOINT } from '@arbor/application';
import { EventStoreDbEventStore } from '@arbor/event-store/eventstoredb';
import { startEsdbFake, type EsdbFake } from '@arbor/event-store/testing';
import { InMemoryDriver } from '@arbor/hypervisor';
import { VMS_COLLECTION } from '@arbor/read-models';
import { MongoReadModelStore } from '@arbor/read-models/mongodb';
import { startMongoFake, type MongoFake } from '@arbor/read-models/testing';
import { startTestArbor } from '../support/arbor-harness';
import { distEntry, startProcess, stopProcess, waitForOutput } from '../support/processes';

/**
 * EVENTSTORE_URL and MONGODB_URL are set in the environment to run the real-server contract
 * suites. The services the other tests start must still run on their own embedded stores (a shared
 * server would mix every test's log); only a test that passes the URLs gets the real adapters.
 * The live fakes here stand in for such servers: anything written to them would show.
 */
describe('test services run on the embedded stores unless a test opts in', () => {
  let esdb: EsdbFake;
  let mongo: MongoFake;
  const saved = { EVENTSTORE_URL: process.env.EVENTSTORE_URL, MONGODB_URL: process.env.MONGODB_URL };

  beforeAll(async () => {
    [esdb, mongo] = await Promise.all([startEsdbFake(), startMongoFake()]);
    process.env.EVENTSTORE_URL = esdb.connectionString;
    process.env.MONGODB_URL = mongo.url;
  });

  afterAll(async () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await Promise.all([esdb?.stop(), mongo?.stop()]);
  });

  /** What the servers in the environment hold: nothing, if nobody used them. */
  const serversUntouched = async () => {
    const events = new EventStoreDbEventStore(esdb.connectionString);
    const readModels = await MongoReadModelStore.connect(mongo.url);
    try {
      expect(await events.readAll()).toEqual([]);
      expect(await readModels.getCheckpoint(PROJECTOR_CHECKPOINT)).toBeNull();
      expect(await readModels.count(VMS_COLLECTION, {})).toBe(0);
    } finally {
      await Promise.all([events.close(), readModels.close()]);
    }
  };

  it('the in-process harness ignores the URLs in the environment', async () => {
    const arbor = await startTestArbor({ driver: new InMemoryDriver() });
    try {
      expect(arbor.config).toMatchObject({ eventStoreUrl: null, mongoUrl: null });
      const created = await arbor.request('POST', '/api/v1/vm/new_root', { body: { vm_config: {} } });
      expect(created.status).toBe(201);
      expect((await arbor.request('GET', '/api/v1/vms')).json).toHaveLength(1);
    } finally {
      await arbor.destroy();
    }
    await serversUntouched();
  });

  it('spawned processes ignore them too, and take the URLs a test passes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'arbor-stores-'));
    try {
      const embedded = startProcess(distEntry('projector'), { ARBOR_DATA_DIR: dir });
      await waitForOutput(embedded, /following the log/);
      await stopProcess(embedded);
      expect(embedded.output()).toMatch(/event store: SQLite/);
      expect(embedded.output()).toMatch(/read models: SQLite/);
      await serversUntouched();

      const distributed = startProcess(distEntry('projector'), { ARBOR_DATA_DIR: dir, EVENTSTORE_URL: esdb.connectionString, MONGODB_URL: mongo.url });
      await waitForOutput(distributed, /following the log/);
      await stopProcess(distributed);
      expect(distributed.output()).toMatch(/event store: EventStoreDB/);
      expect(distributed.output()).toMatch(/read models: MongoDB/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
