import { AggregateRepository, newCommandContext } from '@arbor/application';
import { Vm, VM_CONFIG_DEFAULTS } from '@arbor/domain';
import { InMemoryEventStore, type EventStore, type RecordedEvent } from '@arbor/event-store';
import { SqliteReadModelStore, VMS_COLLECTION, type ReadModelStore } from '@arbor/read-models';
import { HttpError } from '../http/http-error';
import { parseAsOf } from './as-of';
import { ReadModelsAsOf, type AsOfLimits, type ReadsOver } from './read-models-as-of';

/** The ids of the VMs in a store. */
class VmIds implements ReadsOver<VmIds> {
  constructor(private readonly store: ReadModelStore | null = null) {}
  over(store: ReadModelStore): VmIds {
    return new VmIds(store);
  }
  async list(): Promise<string[]> {
    return (await this.store!.find(VMS_COLLECTION, {}, { sort: { _id: 1 } })).map((doc) => doc._id);
  }
}

const vmId = (n: number) => `11111111-1111-4111-8111-${String(n).padStart(12, '0')}`;
/** The VMs as of `position` of a log where VM n is created at position n. */
const upTo = (position: number) => Array.from({ length: position + 1 }, (_, n) => vmId(n));

function gate(): { open: () => void; opened: Promise<void> } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe('ReadModelsAsOf: past read models replayed into throwaway stores', () => {
  const events = new InMemoryEventStore();
  const reads = new VmIds();
  let opened: jest.SpyInstance;

  beforeAll(async () => {
    const aggregates = new AggregateRepository(events);
    for (let n = 0; n < 10; n++) {
      const vm_id = vmId(n);
      const create = { type: 'RequestVmCreation' as const, vm_id, org_id: 'org-1', owner_id: 'key-1', config: VM_CONFIG_DEFAULTS, labels: null, env: {}, ip: 'fd00::1', now: new Date().toISOString() };
      await aggregates.handle(Vm, vm_id, create, newCommandContext({ org_id: 'org-1', actor_key_id: 'key-1' }));
    }
  });
  beforeEach(() => (opened = jest.spyOn(SqliteReadModelStore, 'open')));
  afterEach(() => opened.mockRestore());

  const limited = (limits: Partial<AsOfLimits> = {}) => new ReadModelsAsOf(events, { cached: 4, concurrentBuilds: 1, pendingBuilds: 8, ...limits });

  it('answers as of a position; without as_of, over the reads it was given', async () => {
    const asOf = limited();
    expect(await asOf.read({ position: 3 }, reads, (vms) => vms.list())).toEqual(upTo(3));
    expect(await asOf.read({ position: 0 }, reads, (vms) => vms.list())).toEqual(upTo(0));
    expect(await asOf.read(undefined, reads, async (vms) => vms)).toBe(reads);
    await asOf.onModuleDestroy();
  });

  it('builds one store for concurrent requests of one position, and answers later ones from it', async () => {
    const asOf = limited();
    const answers = await Promise.all([1, 2, 3].map(() => asOf.read({ position: 5 }, reads, (vms) => vms.list())));
    expect(answers).toEqual([upTo(5), upTo(5), upTo(5)]);
    expect(await asOf.read({ position: 5 }, reads, (vms) => vms.list())).toEqual(upTo(5));
    expect(opened).toHaveBeenCalledTimes(1);
    await asOf.onModuleDestroy();
  });

  it('continues from the nearest earlier store, which moves on', async () => {
    const asOf = limited();
    await asOf.read({ position: 2 }, reads, (vms) => vms.list());
    await asOf.read({ position: 8 }, reads, (vms) => vms.list());
    expect(await asOf.read({ position: 6 }, reads, (vms) => vms.list())).toEqual(upTo(6));
    expect(opened).toHaveBeenCalledTimes(2); // 8 went on from 2; 6 started over (8 is later)
    expect(await asOf.read({ position: 9 }, reads, (vms) => vms.list())).toEqual(upTo(9));
    expect(opened).toHaveBeenCalledTimes(2); // 9 went on from 8
    expect(await asOf.read({ position: 2 }, reads, (vms) => vms.list())).toEqual(upTo(2));
    expect(opened).toHaveBeenCalledTimes(3); // 2 was gone
    await asOf.onModuleDestroy();
  });

  it('never continues from, nor closes, a store a request is reading', async () => {
    const asOf = limited({ cached: 1 });
    const held = gate();
    const reading = asOf.read({ position: 1 }, reads, async (vms) => {
      await held.opened;
      return vms.list();
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await asOf.read({ position: 7 }, reads, (vms) => vms.list())).toEqual(upTo(7));
    expect(opened).toHaveBeenCalledTimes(2); // 1 was being read: 7 started over; 1 is evicted, not closed
    held.open();
    expect(await reading).toEqual(upTo(1));
    await asOf.onModuleDestroy();
  });

  it('bounds the positions waiting to be built (503 past it)', async () => {
    const asOf = limited({ pendingBuilds: 2 });
    const building = [asOf.read({ position: 3 }, reads, (vms) => vms.list()), asOf.read({ position: 4 }, reads, (vms) => vms.list())];
    await expect(asOf.read({ position: 5 }, reads, (vms) => vms.list())).rejects.toMatchObject({ status: 503, message: expect.stringMatching(/as_of/) });
    expect(await asOf.read({ position: 4 }, reads, (vms) => vms.list())).toEqual(upTo(4)); // joins its build
    expect(await Promise.all(building)).toEqual([upTo(3), upTo(4)]);
    await asOf.onModuleDestroy();
  });

  it('refuses a position past the head and a time in the future (400)', async () => {
    const asOf = limited();
    await expect(asOf.positionOf({ position: 10 })).rejects.toEqual(new HttpError(400, 'as_of 10 is past the head of the log (position 9)'));
    await expect(asOf.positionOf({ time: Date.now() + 60_000 })).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/in the future/) });
  });

  it('names a time by the last event recorded at or before it, over sparse positions', async () => {
    const times = [3, 7, 8, 20, 21, 40].map((position, i) => ({ position, created_at: new Date(Date.UTC(2026, 0, 1, 10, i * 10)).toISOString() }));
    const sparse = {
      headPosition: async () => 40,
      readAll: async ({ after_position = -1, max_count = Infinity }: { after_position?: number; max_count?: number }) =>
        times.filter((event) => event.position > after_position).slice(0, max_count) as RecordedEvent[],
    } as unknown as EventStore;
    const asOf = new ReadModelsAsOf(sparse);
    const at = (iso: string) => asOf.positionOf({ time: Date.parse(iso) });
    expect(await at('2025-12-31T00:00:00Z')).toBe(-1);
    expect(await at('2026-01-01T10:00:00Z')).toBe(3);
    expect(await at('2026-01-01T10:09:59Z')).toBe(3);
    expect(await at('2026-01-01T10:10:00Z')).toBe(7);
    expect(await at('2026-01-01T10:35:00Z')).toBe(20);
    expect(await at('2026-01-01T10:40:00Z')).toBe(21);
    expect(await at('2026-01-01T10:50:00Z')).toBe(40);
    expect(await at('2026-01-02T00:00:00Z')).toBe(40);
  });
});

describe('parseAsOf: the as_of query parameter', () => {
  it.each([
    ['123', { position: 123 }],
    ['0', { position: 0 }],
    ['2026-01-01T10:00:00Z', { time: Date.UTC(2026, 0, 1, 10) }],
    ['2026-01-01T10:00:00.250Z', { time: Date.UTC(2026, 0, 1, 10, 0, 0, 250) }],
    ['2026-01-01T12:00:00+02:00', { time: Date.UTC(2026, 0, 1, 10) }],
    ['2026-01-01T12:00:00 02:00', { time: Date.UTC(2026, 0, 1, 10) }],
    ['2026-01-01T12:00:00+0200', { time: Date.UTC(2026, 0, 1, 10) }],
    ['2026-01-01T10:00:00', { time: Date.UTC(2026, 0, 1, 10) }],
    ['2026-01-01T10:00', { time: Date.UTC(2026, 0, 1, 10) }],
    ['2026-01-01', { time: Date.UTC(2026, 0, 1) }],
    ['', undefined],
    [undefined, undefined],
  ])('reads %j', (value, expected) => {
    expect(parseAsOf(value)).toEqual(expected);
  });

  it.each(['-1', '1.5', '1e3', ' 12', '9007199254740993', 'yesterday', '2026-02-30', '2026-13-01', '2026-01-01T24:30:00Z', '2026-1-1', ['1', '2']])('refuses %j (400)', (value) => {
    expect(() => parseAsOf(value)).toThrow(new HttpError(400, 'Failed to deserialize query string: as_of must be a log position (a whole number) or an ISO 8601 time'));
  });
});
