import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN_KEY_FILE } from '../../apps/api/src/bootstrap/bootstrap-admin-key';
import { createSandboxDriver } from '../../apps/vm-worker/src/open-driver';
import { PROJECTOR_CHECKPOINT } from '../../libs/application/src/projection-waiter';
import { EventStoreDbEventStore } from '../../libs/event-store/src/eventstoredb/eventstoredb-event-store';
import { startEsdbFake, type EsdbFake } from '../../libs/event-store/src/testing/esdb-fake';
import { MongoReadModelStore } from '../../libs/read-models/src/mongodb/mongo-read-model-store';
import { startMongoFake, type MongoFake } from '../../libs/read-models/src/testing/mongo-fake';
import { apiClient } from '../support/api-client';
import { distEntry, freePort, type RunningProcess, startProcess, stopProcess, waitForOutput } from '../support/processes';

/**
 * The distributed shape end to end: api, projector and vm-worker as separate processes (the built
 * entry points docker compose runs), each with its own data directory, sharing only the stores —
 * here the EventStoreDB and MongoDB adapters, talking over real sockets to the in-process fakes
 * (the `testing` folders of libs/event-store and libs/read-models). The fakes check our use of the two clients across processes (requests,
 * subscriptions, sessions and transactions as they cross the wire), not the servers' semantics:
 * run the contract suites with EVENTSTORE_URL/MONGODB_URL for those.
 */
describe('api, projector and vm-worker as separate processes on EventStoreDB + MongoDB (sandbox)', () => {
  const cacheDir = process.env.ARBOR_CACHE_DIR ?? '/var/cache/arbor';
  let esdb: EsdbFake;
  let mongo: MongoFake;
  let dirs: { api: string; projector: string; worker: string };
  let stores: Record<string, string>;
  let api: RunningProcess;
  let projector: RunningProcess;
  let worker: RunningProcess;
  let call: ReturnType<typeof apiClient>;
  const driver = () => createSandboxDriver({ dataDir: dirs.worker, cacheDir });

  const startProjector = async () => {
    projector = startProcess(distEntry('projector'), { ...stores, ARBOR_DATA_DIR: dirs.projector });
    await waitForOutput(projector, /following the log/);
  };

  beforeAll(async () => {
    [esdb, mongo] = await Promise.all([startEsdbFake(), startMongoFake()]);
    stores = { EVENTSTORE_URL: esdb.connectionString, MONGODB_URL: mongo.url, HYPERVISOR: 'sandbox', ARBOR_CACHE_DIR: cacheDir };
    const dir = (name: string) => mkdtempSync(join(tmpdir(), `arbor-dist-${name}-`));
    dirs = { api: dir('api'), projector: dir('projector'), worker: dir('worker') };
    const port = await freePort();
    api = startProcess(distEntry('api'), { ...stores, ARBOR_DATA_DIR: dirs.api, PORT: String(port) });
    worker = startProcess(distEntry('vm-worker'), { ...stores, ARBOR_DATA_DIR: dirs.worker });
    await startProjector();
    await waitForOutput(api, /listening on port/);
    await waitForOutput(worker, /following the log/, 300_000);
    for (const [process, adapters] of [
      [api, /event store: EventStoreDB[\s\S]*read models: MongoDB/],
      [projector, /event store: EventStoreDB[\s\S]*read models: MongoDB/],
      [worker, /event store: EventStoreDB/],
    ] as const) {
      expect(process.output()).toMatch(adapters);
    }
    call = apiClient(`http://127.0.0.1:${port}`, readFileSync(join(dirs.api, ADMIN_KEY_FILE), 'utf8').trim());
  }, 320_000);

  afterAll(async () => {
    await Promise.all([api, projector, worker].filter(Boolean).map((p) => stopProcess(p)));
    if (dirs) {
      for (const machine of await driver().list()) await driver().destroy(machine.vm_id);
      for (const dir of Object.values(dirs)) rmSync(dir, { recursive: true, force: true });
    }
    await Promise.all([esdb?.stop(), mongo?.stop()]);
  });

  it('creates (wait_boot), lists, pauses, resumes and deletes a real machine', async () => {
    const created = await call('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: { labels: { via: 'esdb+mongo' } } });
    expect(created.status).toBe(201);
    const vmId: string = created.json.vm_id;
    expect(await driver().status(vmId)).toBe('running');
    const listed = await call('GET', '/api/v1/vms');
    expect(listed.status).toBe(200);
    expect(listed.json).toEqual(expect.arrayContaining([expect.objectContaining({ vm_id: vmId, state: 'running', labels: { via: 'esdb+mongo' } })]));

    expect((await call('PATCH', `/api/v1/vm/${vmId}/state`, { state: 'Paused' })).status).toBe(200);
    expect(await driver().status(vmId)).toBe('paused');
    expect((await call('GET', `/api/v1/vm/${vmId}/status`)).json.state).toBe('paused');
    expect((await call('PATCH', `/api/v1/vm/${vmId}/state`, { state: 'Running' })).status).toBe(200);
    expect(await driver().status(vmId)).toBe('running');

    expect((await call('DELETE', `/api/v1/vm/${vmId}`)).status).toBe(200);
    expect(await driver().status(vmId)).toBeNull();
    expect((await call('GET', '/api/v1/vms')).json.map((vm: { vm_id: string }) => vm.vm_id)).not.toContain(vmId);
  }, 120_000);

  it('serves the event feed from the beginning of the log (no after)', async () => {
    const vmId = (await call('POST', '/api/v1/vm/new_root', { vm_config: {} })).json.vm_id;

    const feed = await call('GET', '/api/v1/events?limit=1000');

    expect(feed.status).toBe(200);
    const events = new EventStoreDbEventStore(esdb.connectionString);
    const [oldest] = await events.readAll({ max_count: 1 });
    await events.close();
    expect(feed.json.events[0]).toMatchObject({ position: oldest.position, event_id: oldest.id });
    expect(feed.json.events).toContainEqual(expect.objectContaining({ stream_id: `vm-${vmId}`, type: 'VmCreationRequested' }));
    expect(feed.json.has_more).toBe(false);
  }, 60_000);

  it('rebuilds the read models from EventStoreDB into MongoDB with the rebuild entry point', async () => {
    await call('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: { labels: { kept: 'yes' } } });
    const before = (await call('GET', '/api/v1/vms')).json;
    await stopProcess(projector); // the rebuild wants the projector stopped

    const rebuild = startProcess(distEntry('projector', 'rebuild.js'), { ...stores, ARBOR_DATA_DIR: dirs.projector });
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
    expect((await call('GET', '/api/v1/vms')).json).toEqual(before);

    // The projector carries on from the rebuilt checkpoint: a new write becomes visible.
    await startProjector();
    const next = await call('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: {} });
    expect(next.status).toBe(201);
    expect((await call('GET', '/api/v1/vms')).json).toHaveLength(before.length + 1);
  }, 120_000);
});
