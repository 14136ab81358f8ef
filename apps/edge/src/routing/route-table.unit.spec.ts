import { AggregateRepository, newCommandContext } from '@arbor/application';
import { CustomDomain, Vm, VM_CONFIG_DEFAULTS, type VmCommand } from '@arbor/domain';
import { InMemoryEventStore } from '@arbor/event-store';
import { ALL_PROJECTIONS, Projector } from '@arbor/projections';
import { SqliteReadModelStore, type ReadModelStore } from '@arbor/read-models';
import type { EdgeName } from './edge-names';
import { RouteTable } from './route-table';

const now = '2026-11-26T10:00:00.000Z';
const vmId = (n: number) => `11111111-1111-4111-8111-${String(n).padStart(12, '0')}`;
const vmName = (n: number): EdgeName => ({ kind: 'vm', vm_id: vmId(n) });

/**
 * The route table against the real projections on an in-memory log, with the projector and the
 * edge's follower driven by hand, so that either can be made to lag the other: whichever is
 * behind, a route the read models no longer give is never served from memory.
 */
describe.each([
  ['commits reported in this process', true],
  ['the checkpoint asked for per connection', false],
])('the route table (%s)', (_, readModelsCommittedHere) => {
  let events: InMemoryEventStore;
  let aggregates: AggregateRepository;
  let readModels: SqliteReadModelStore;
  let projector: Projector;
  let routes: RouteTable;
  let reads: number;
  /** Log positions the projector (the read models) and the route table's follower have reached. */
  let projected: number;
  let followed: number;

  beforeEach(async () => {
    events = new InMemoryEventStore();
    aggregates = new AggregateRepository(events);
    readModels = SqliteReadModelStore.open(':memory:');
    projector = new Projector(events, readModels, ALL_PROJECTIONS);
    reads = 0;
    const counted = new Proxy(readModels, {
      get(target, property) {
        if (property === 'findOne') return (...args: Parameters<ReadModelStore['findOne']>) => (reads++, target.findOne(...args));
        const value = Reflect.get(target, property);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    routes = new RouteTable(counted, { readModelsCommittedHere });
    await routes.start();
    projected = followed = await events.headPosition();
    routes.followFrom(followed);
  });
  afterEach(async () => {
    routes.stop();
    await readModels.close();
  });

  const context = (org_id = 'org-1') => newCommandContext({ org_id, actor_key_id: 'key-1' });
  /** The projector applies the log up to its head. */
  const project = async () => {
    for (const event of await events.readAll({ after_position: projected })) await projector.apply(event);
    projected = await events.headPosition();
  };
  /** The edge's follower passes the log up to its head. */
  const follow = async () => {
    for (const event of await events.readAll({ after_position: followed })) routes.changed(event);
    followed = await events.headPosition();
  };
  const boot = async (n: number, ip: string, org_id = 'org-1') => {
    const vm_id = vmId(n);
    await aggregates.handle(Vm, vm_id, {
      type: 'RequestVmCreation', vm_id, org_id, owner_id: 'key-1', config: VM_CONFIG_DEFAULTS, labels: null, env: {}, ip, parent_commit_id: null, grandparent_vm_id: null, now,
    }, context(org_id));
    await aggregates.handle(Vm, vm_id, { type: 'RecordVmBooted', driver: 'memory', now }, context(org_id));
  };
  const vm = (n: number, command: VmCommand) => aggregates.handle(Vm, vmId(n), command, context());
  const running = (n: number, address: string) => ({ ok: true, vm_id: vmId(n), address });

  it('remembers a running VM\'s route: the next connection is routed without reading the read models', async () => {
    await boot(1, 'fd00::1');
    await project();
    await follow();
    expect(await routes.route(vmName(1))).toEqual(running(1, 'fd00::1'));
    expect(reads).toBe(1);
    expect(await routes.route(vmName(1))).toEqual(running(1, 'fd00::1'));
    expect(reads).toBe(1);
    expect(routes.known(vmName(1))).toEqual(readModelsCommittedHere ? running(1, 'fd00::1') : undefined);
    expect(routes.known(vmName(2))).toBeUndefined();
  });

  it('refuses a VM whose deletion the read models show, even before its follower has seen it, and forgets it when it does', async () => {
    await boot(1, 'fd00::1');
    await project();
    await follow();
    await routes.route(vmName(1));
    await vm(1, { type: 'RequestVmDeletion' });
    await project(); // the follower lags: the read models are ahead of it
    expect(routes.known(vmName(1))).toBeUndefined();
    expect(await routes.route(vmName(1))).toMatchObject({ ok: false, status: 404 });
    await follow();
    expect(routes.known(vmName(1))).toBeUndefined();
    expect(await routes.route(vmName(1))).toMatchObject({ ok: false, status: 404 });
  });

  it('does not remember what it read from read models behind its follower (its deletion would never come again)', async () => {
    await boot(1, 'fd00::1');
    await project();
    await follow();
    await vm(1, { type: 'RequestVmDeletion' });
    await follow(); // the follower passes the deletion before the read models show it
    expect(await routes.route(vmName(1))).toEqual(running(1, 'fd00::1')); // what the read models still say, as before
    await project();
    expect(routes.known(vmName(1))).toBeUndefined();
    expect(await routes.route(vmName(1))).toMatchObject({ ok: false, status: 404 });
  });

  it('never routes a deleted VM to its address once another org\'s VM has it', async () => {
    await boot(1, 'fd00::1');
    await project();
    await follow();
    await routes.route(vmName(1));
    await vm(1, { type: 'RequestVmDeletion' });
    await vm(1, { type: 'RecordVmDeleted', now });
    await boot(2, 'fd00::1', 'org-2');
    await project();
    expect(routes.known(vmName(1))).toBeUndefined();
    expect(await routes.route(vmName(1))).toMatchObject({ ok: false, status: 404 });
    await follow();
    expect(await routes.route(vmName(1))).toMatchObject({ ok: false, status: 404 });
    expect(await routes.route(vmName(2))).toEqual(running(2, 'fd00::1'));
  });

  it('refuses a paused VM with the reason, and routes it again once it runs', async () => {
    await boot(1, 'fd00::1');
    await project();
    await follow();
    await routes.route(vmName(1));
    await vm(1, { type: 'RequestVmStateChange', target: 'Paused' });
    await vm(1, { type: 'RecordVmPaused' });
    await project();
    await follow();
    expect(routes.known(vmName(1))).toBeUndefined();
    expect(await routes.route(vmName(1))).toMatchObject({ ok: false, status: 503, reason: expect.stringContaining('is paused') });
    await vm(1, { type: 'RequestVmStateChange', target: 'Running' });
    await vm(1, { type: 'RecordVmResumed' });
    await project();
    await follow();
    expect(await routes.route(vmName(1))).toEqual(running(1, 'fd00::1'));
  });

  it('a custom domain moved to another org\'s VM goes to that VM, never to the one it left', async () => {
    await boot(1, 'fd00::1');
    await boot(2, 'fd00::2', 'org-2');
    const domain: EdgeName = { kind: 'domain', domain: 'app.example.com' };
    await aggregates.handle(CustomDomain, 'app.example.com', { type: 'AddDomain', domain_id: 'd1', domain: 'app.example.com', vm_id: vmId(1), org_id: 'org-1', now }, context());
    await project();
    await follow();
    expect(await routes.route(domain)).toEqual(running(1, 'fd00::1'));
    await aggregates.handle(CustomDomain, 'app.example.com', { type: 'RemoveDomain', domain_id: 'd1', org_id: 'org-1', now }, context());
    await aggregates.handle(CustomDomain, 'app.example.com', { type: 'AddDomain', domain_id: 'd2', domain: 'app.example.com', vm_id: vmId(2), org_id: 'org-2', now }, context('org-2'));
    await project();
    expect(routes.known(domain)).toBeUndefined();
    expect(await routes.route(domain)).toEqual(running(2, 'fd00::2'));
    await follow();
    expect(await routes.route(domain)).toEqual(running(2, 'fd00::2'));
    expect(await routes.route(domain)).toEqual(running(2, 'fd00::2'));
  });

  it('any event of a VM\'s stream forgets its route (read again, as it now is)', async () => {
    await boot(1, 'fd00::1');
    await project();
    await follow();
    await routes.route(vmName(1));
    await vm(1, { type: 'SetVmLabels', labels: { a: 'b' } });
    await project();
    await follow();
    const before = reads;
    expect(await routes.route(vmName(1))).toEqual(running(1, 'fd00::1'));
    expect(reads).toBe(before + 1);
  });

  it('serves nothing from memory before it follows the log', async () => {
    const fresh = new RouteTable(readModels, { readModelsCommittedHere });
    await fresh.start();
    await boot(1, 'fd00::1');
    await project();
    expect(await fresh.route(vmName(1))).toEqual(running(1, 'fd00::1'));
    expect(fresh.known(vmName(1))).toBeUndefined();
    fresh.stop();
  });
});
