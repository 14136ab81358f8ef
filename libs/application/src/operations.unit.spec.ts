import { DomainError, Vm, VM_CONFIG_DEFAULTS, type VmCommand } from '@arbor/domain';
import { InMemoryEventStore } from '@arbor/event-store';
import { SqliteReadModelStore } from '@arbor/read-models';
import { AggregateRepository } from './aggregate-repository';
import { newCommandContext } from './command-context';
import { Operations } from './operations';
import { PROJECTOR_CHECKPOINT, ProjectionWaiter } from './projection-waiter';

const vm_id = '11111111-1111-4111-8111-111111111111';
const now = '2026-11-23T10:00:00.000Z';
const create: VmCommand = { type: 'RequestVmCreation', vm_id, org_id: 'org-1', owner_id: 'key-1', config: VM_CONFIG_DEFAULTS, labels: null, env: {}, ip: 'fd00::1', now };
const context = () => newCommandContext({ org_id: 'org-1', actor_key_id: 'key-1' });

/** The api's side of an operation, with the worker's and the projector's played by the spec. */
describe('operations: the api answers once the intent is done and visible', () => {
  let aggregates: AggregateRepository;
  let readModels: SqliteReadModelStore;
  let operations: Operations;
  const projectTo = async (position: number) => void (await readModels.commit([], { name: PROJECTOR_CHECKPOINT, position }));
  const worker = (command: VmCommand) => aggregates.handle(Vm, vm_id, command, newCommandContext({ org_id: 'org-1', actor_key_id: null }));

  beforeEach(async () => {
    aggregates = new AggregateRepository(new InMemoryEventStore());
    readModels = SqliteReadModelStore.open(':memory:');
    operations = new Operations(aggregates, new ProjectionWaiter(readModels, 5_000), 5_000);
    await aggregates.handle(Vm, vm_id, create, context());
    await worker({ type: 'RecordVmBooted', driver: 'memory', now });
  });
  afterEach(() => readModels.close());

  it('waits for the outcome of the intent, then for the read models to show it', async () => {
    let answered = false;
    const pause = operations.run(Vm, vm_id, { type: 'RequestVmStateChange', target: 'Paused' }, context()).then(() => (answered = true));
    await new Promise((r) => setTimeout(r, 50));
    expect(answered).toBe(false); // the intent is in the log, its outcome is not
    const outcome = await worker({ type: 'RecordVmPaused' });
    await new Promise((r) => setTimeout(r, 50));
    expect(answered).toBe(false); // done, but not yet visible
    await projectTo(outcome.position!);
    await pause;
    expect(answered).toBe(true);
  });

  it("throws the rule's error when the intent ends in failure", async () => {
    const commit = operations.run(Vm, vm_id, { type: 'RequestVmCommit', commit_id: 'c-1', name: 'c', description: null, keep_paused: false }, context());
    await new Promise((r) => setTimeout(r, 20));
    const failure = await worker({ type: 'RecordVmOperationFailed', operation: 'commit', reason: 'disk full' });
    await projectTo(failure.position!);
    await expect(commit).rejects.toEqual(new DomainError('failed', 'disk full'));
  });

  it('a command that appends no intent waits for the read models only; one that appends nothing answers at once', async () => {
    const labels = operations.run(Vm, vm_id, { type: 'SetVmLabels', labels: { a: 'b' } }, context());
    await new Promise((r) => setTimeout(r, 20));
    await projectTo(await aggregates.store.headPosition());
    expect((await labels).events.map((e) => e.type)).toEqual(['VmLabelsSet']);
    expect((await operations.run(Vm, vm_id, { type: 'RequestVmStateChange', target: 'Running' }, context())).events).toEqual([]);
  });
});
