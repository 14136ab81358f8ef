import { Vm, VM_CONFIG_DEFAULTS, type VmCommand } from '@arbor/domain';
import { InMemoryEventStore } from '@arbor/event-store';
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
