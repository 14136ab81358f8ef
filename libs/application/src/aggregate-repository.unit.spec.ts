import { OrgUsage, Vm, VM_CONFIG_DEFAULTS, type OrgUsageCommand, type VmCommand } from '@arbor/domain';
import { InMemoryEventStore, type EventStore } from '@arbor/event-store';
import { AggregateRepository } from './aggregate-repository';
import { newCommandContext } from './command-context';

const vm_id = '11111111-1111-4111-8111-111111111111';
const create: VmCommand = { type: 'RequestVmCreation', vm_id, org_id: 'org-1', owner_id: 'key-1', config: VM_CONFIG_DEFAULTS, labels: null, env: {}, ip: 'fd00::1', now: '2026-11-23T10:00:00.000Z' };

describe('aggregate repository: a command run again with its own id', () => {
  it('gets its first result back instead of being judged against its own outcome', async () => {
    const aggregates = new AggregateRepository(new InMemoryEventStore());
    const context = newCommandContext({ org_id: 'org-1', actor_key_id: 'key-1' });
    const first = await aggregates.handle(Vm, vm_id, create, context);
    await aggregates.handle(Vm, vm_id, { type: 'RecordVmBooted', driver: 'memory', now: create.now }, newCommandContext({ org_id: 'org-1', actor_key_id: null }));

    const retry = await aggregates.handle(Vm, vm_id, create, context);
    expect(retry).toEqual({ ...first, replayed: true });
    expect((await aggregates.store.readStream(Vm.stream(vm_id))).map((e) => e.type)).toEqual(['VmCreationRequested', 'VmBooted']);
    expect(await aggregates.appended(Vm, vm_id, context.command_id)).toBe(true);
  });

  it('concurrent twins append once and both get the result', async () => {
    const aggregates = new AggregateRepository(new InMemoryEventStore());
    const context = newCommandContext({ org_id: 'org-1', actor_key_id: 'key-1' });
    const results = await Promise.all([1, 2, 3].map(() => aggregates.handle(Vm, vm_id, create, context)));
    expect(new Set(results.map((r) => r.event_ids[0])).size).toBe(1);
    expect(await aggregates.store.readStream(Vm.stream(vm_id))).toHaveLength(1);
  });

  it('another command meeting the same state is decided, and refused', async () => {
    const aggregates = new AggregateRepository(new InMemoryEventStore());
    await aggregates.handle(Vm, vm_id, create, newCommandContext({ org_id: 'org-1', actor_key_id: 'key-1' }));
    await expect(aggregates.handle(Vm, vm_id, create, newCommandContext({ org_id: 'org-1', actor_key_id: 'key-1' }))).rejects.toThrow('vm already exists');
  });

  it('loads an aggregate folded from its stream, with its revision and stored events', async () => {
    const aggregates = new AggregateRepository(new InMemoryEventStore());
    expect(await aggregates.load(Vm, vm_id)).toEqual({ state: Vm.decider.initialState(), revision: -1, recorded: [] });
    await aggregates.handle(Vm, vm_id, create, newCommandContext({ org_id: 'org-1', actor_key_id: 'key-1' }));
    const loaded = await aggregates.load(Vm, vm_id);
    expect(loaded.state.lifecycle).toBe('booting');
    expect(loaded.revision).toBe(0);
    expect(loaded.recorded.map((e) => e.type)).toEqual(['VmCreationRequested']);
  });
});

describe('aggregate repository: a burst of commands on one stream', () => {
  const org_id = 'org-1';
  const limits = { org: { vms: 20, vcpus: 1000, memory_mib: 1_000_000, disk_mib: 1_000_000, commit_bytes: 1e12 }, vm: { vcpu_count: 8, mem_size_mib: 16_384, fs_size_mib: 65_536 }, branch_count: 10 };
  const reserve = (index: number): OrgUsageCommand => ({
    type: 'ReserveVmResources',
    org_id,
    vms: [{ vm_id: `vm-${index}`, vcpu_count: 1, mem_size_mib: 128, fs_size_mib: 256 }],
    limits,
    existing: [],
    now: '2026-11-26T10:00:00.000Z',
  });
  const release = (index: number): OrgUsageCommand => ({ type: 'ReleaseVmResources', org_id, vm_id: `vm-${index}`, now: '2026-11-26T10:00:00.000Z' });
  const context = () => newCommandContext({ org_id, actor_key_id: 'key-1' });
  const reservedIn = async (store: EventStore) =>
    (await store.readStream(OrgUsage.stream(org_id))).filter((e) => e.type === 'VmResourcesReserved').map((e) => (e.data as { vm_id: string }).vm_id);

  it('decides each on the state the ones before it leave: the quota holds, and no command is refused for a conflict', async () => {
    const store = new InMemoryEventStore();
    const aggregates = new AggregateRepository(store);
    const outcomes = await Promise.allSettled(Array.from({ length: 25 }, (_, index) => aggregates.handle(OrgUsage, org_id, reserve(index), context())));
    const refusals = outcomes.filter((outcome) => outcome.status === 'rejected').map((outcome) => String((outcome as PromiseRejectedResult).reason));
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(20);
    expect(refusals).toHaveLength(5);
    refusals.forEach((reason) => expect(reason).toMatch('org quota exceeded: vms limit is 20'));
    // In submission order: the first twenty won.
    expect(await reservedIn(store)).toEqual(Array.from({ length: 20 }, (_, index) => `vm-${index}`));
  });

  it('decides a batch again when another process wrote the stream first, refusals included', async () => {
    const store = new InMemoryEventStore();
    const ours = new AggregateRepository(store);
    const theirs = new AggregateRepository(store);
    for (let index = 100; index < 120; index++) await theirs.handle(OrgUsage, org_id, reserve(index), context());
    await ours.load(OrgUsage, org_id); // ours has the stream folded, the quota full
    // Another process frees a slot just as ours appends a batch decided on what it read.
    const append = store.append.bind(store);
    let raced = false;
    jest.spyOn(store, 'append').mockImplementation(async (stream, events, expected) => {
      if (!raced) {
        raced = true;
        await theirs.handle(OrgUsage, org_id, release(101), context());
      }
      return append(stream, events, expected);
    });
    // Decided on a full quota, the third is refused; decided again with the slot freed, it fits.
    const outcomes = await Promise.allSettled([release(100), reserve(1), reserve(2)].map((command) => ours.handle(OrgUsage, org_id, command, context())));
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    const { state } = await ours.load(OrgUsage, org_id);
    expect(Object.keys(state.vms)).toHaveLength(20);
    expect(Object.keys(state.vms)).toEqual(expect.arrayContaining(['vm-1', 'vm-2']));
    expect(Object.keys(state.vms)).not.toEqual(expect.arrayContaining(['vm-100']));
    expect(Object.keys(state.vms)).not.toEqual(expect.arrayContaining(['vm-101']));
  });

  it('answers twins in one batch once, appending once', async () => {
    const store = new InMemoryEventStore();
    const aggregates = new AggregateRepository(store);
    const twin = context();
    const [first, second] = await Promise.all([aggregates.handle(OrgUsage, org_id, reserve(1), twin), aggregates.handle(OrgUsage, org_id, reserve(1), twin)]);
    expect(second).toEqual({ ...first, replayed: true });
    expect(await reservedIn(store)).toEqual(['vm-1']);
  });

  it('reads what another process appended since it last folded the stream', async () => {
    const store = new InMemoryEventStore();
    const ours = new AggregateRepository(store);
    const theirs = new AggregateRepository(store);
    await ours.handle(OrgUsage, org_id, reserve(1), context());
    await theirs.handle(OrgUsage, org_id, reserve(2), context());
    const loaded = await ours.load(OrgUsage, org_id);
    expect(Object.keys(loaded.state.vms)).toEqual(['vm-1', 'vm-2']);
    expect(loaded.revision).toBe(2);
    expect(loaded.recorded.map((e) => e.type)).toEqual(['OrgUsageOpened', 'VmResourcesReserved', 'VmResourcesReserved']);
  });
});
