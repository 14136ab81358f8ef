import { streams, VM_CONFIG_DEFAULTS, vmDecider, type VmCommand } from '@arbor/domain';
import { InMemoryEventStore } from '@arbor/event-store';
import { handleCommand } from './aggregate-repository';
import { newCommandContext } from './command-context';

const vm_id = '11111111-1111-4111-8111-111111111111';
const stream = streams.vm(vm_id);
const create: VmCommand = { type: 'RequestVmCreation', vm_id, org_id: 'org-1', owner_id: 'key-1', config: VM_CONFIG_DEFAULTS, labels: null, env: {}, ip: 'fd00::1', now: '2026-11-23T10:00:00.000Z' };

describe('aggregate repository: a command run again with its own id', () => {
  it('gets its first result back instead of being judged against its own outcome', async () => {
    const store = new InMemoryEventStore();
    const context = newCommandContext({ org_id: 'org-1', actor_key_id: 'key-1' });
    const first = await handleCommand(store, stream, vmDecider, create, context);
    await handleCommand(store, stream, vmDecider, { type: 'RecordVmBooted', driver: 'memory', now: create.now }, newCommandContext({ org_id: 'org-1', actor_key_id: null }));

    const retry = await handleCommand(store, stream, vmDecider, create, context);
    expect(retry).toEqual({ ...first, replayed: true });
    expect((await store.readStream(stream)).map((e) => e.type)).toEqual(['VmCreationRequested', 'VmBooted']);
  });

  it('concurrent twins append once and both get the result', async () => {
    const store = new InMemoryEventStore();
    const context = newCommandContext({ org_id: 'org-1', actor_key_id: 'key-1' });
    const results = await Promise.all([1, 2, 3].map(() => handleCommand(store, stream, vmDecider, create, context)));
    expect(new Set(results.map((r) => r.event_ids[0])).size).toBe(1);
    expect(await store.readStream(stream)).toHaveLength(1);
  });

  it('another command meeting the same state is decided, and refused', async () => {
    const store = new InMemoryEventStore();
    await handleCommand(store, stream, vmDecider, create, newCommandContext({ org_id: 'org-1', actor_key_id: 'key-1' }));
    await expect(handleCommand(store, stream, vmDecider, create, newCommandContext({ org_id: 'org-1', actor_key_id: 'key-1' }))).rejects.toThrow('vm already exists');
  });
});
