import { AggregateRepository, newCommandContext, PROJECTOR_CHECKPOINT } from '@arbor/application';
import { Vm, VM_CONFIG_DEFAULTS } from '@arbor/domain';
import { InMemoryEventStore } from '@arbor/event-store';
import { SqliteReadModelStore, type ReadModelStore } from '@arbor/read-models';
import { pollUntil } from '../../../test/support/poll-until';
import { Projector } from './projector';
import { ALL_PROJECTIONS } from './projections';
import { contents, id, writeHistory } from './testing/history';

/** The store, counting its commits; the first `failing` commits throw (a busy or full disk). */
function countingStore(store: ReadModelStore, failing = 0): { store: ReadModelStore; commits: () => number } {
  let commits = 0;
  let failures = failing;
  const proxy = new Proxy(store, {
    get(target, property) {
      if (property === 'commit') {
        return async (...args: Parameters<ReadModelStore['commit']>) => {
          if (failures-- > 0) throw new Error('disk busy');
          commits++;
          return target.commit(...args);
        };
      }
      const value = Reflect.get(target, property);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { store: proxy, commits: () => commits };
}

describe('the live projector', () => {
  const events = new InMemoryEventStore();
  let oneByOne: SqliteReadModelStore;
  let head: number;
  const projectors: Projector[] = [];
  const stores: SqliteReadModelStore[] = [];

  beforeAll(async () => {
    await writeHistory(new AggregateRepository(events));
    head = await events.headPosition();
    oneByOne = SqliteReadModelStore.open(':memory:');
    const projector = new Projector(events, oneByOne, ALL_PROJECTIONS);
    for (const event of await events.readAll()) await projector.apply(event);
  });
  afterEach(async () => {
    await Promise.all(projectors.splice(0).map((projector) => projector.stop()));
    await Promise.all(stores.splice(0).map((store) => store.close()));
  });
  afterAll(() => oneByOne.close());

  const follow = async (failing = 0) => {
    const sqlite = SqliteReadModelStore.open(':memory:');
    stores.push(sqlite);
    const counted = countingStore(sqlite, failing);
    const projector = new Projector(events, counted.store, ALL_PROJECTIONS);
    projectors.push(projector);
    await projector.start();
    return { ...counted, checkpoint: () => sqlite.getCheckpoint(PROJECTOR_CHECKPOINT) };
  };

  it('behind the log, commits the waiting events a batch at a time, leaving what one event at a time leaves', async () => {
    const { commits, checkpoint } = await follow();
    await pollUntil(async () => (await checkpoint()) === head);

    expect(await contents(stores[0])).toEqual(await contents(oneByOne));
    // Each batch ends early only where a projection reads what the batch holds.
    expect(commits()).toBeLessThan((head + 1) / 2);
  });

  it('keeps what a failed commit held and commits it when the store recovers: no event skipped', async () => {
    const { checkpoint } = await follow(3);
    await pollUntil(async () => (await checkpoint()) === head);

    expect(await contents(stores[0])).toEqual(await contents(oneByOne));
  });

  it('caught up, commits a new event at once, without waiting for the next', async () => {
    const { commits, checkpoint } = await follow();
    await pollUntil(async () => (await checkpoint()) === head);
    const before = commits();

    const vm_id = id(9, 1);
    const { position } = await new AggregateRepository(events).handle(
      Vm,
      vm_id,
      { type: 'RequestVmCreation', vm_id, org_id: 'org-1', owner_id: 'key-1', config: VM_CONFIG_DEFAULTS, labels: null, env: {}, ip: 'fd00::9', now: new Date().toISOString() },
      newCommandContext({ org_id: 'org-1', actor_key_id: null }),
    );

    await pollUntil(async () => (await checkpoint()) === position);
    expect(commits()).toBe(before + 1);
    expect(await stores[0].findOne('vms', { _id: vm_id })).toMatchObject({ vm_id });
  });
});
