import { InMemoryDriver } from '@arbor/hypervisor';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';

/** The log as an audit trail: readable by position, paged, with correlation across api and worker. */
describe('event feed (HTTP)', () => {
  let arbor: TestArbor;
  let vmId: string;
  beforeAll(async () => {
    arbor = await startTestArbor({ driver: new InMemoryDriver() });
    vmId = (await arbor.request('POST', '/api/v1/vm/new_root?wait_boot=true', { body: { vm_config: {} }, headers: { 'x-correlation-id': '5d9c7c2e-0b8e-4f7e-9a51-0c3f3e6d2a11' } })).json.vm_id;
    await arbor.request('PATCH', `/api/v1/vm/${vmId}/state`, { body: { state: 'Paused' } });
  });
  afterAll(() => arbor.destroy());

  it("ties the request to the worker's outcome: same correlation id, causation = the intent", async () => {
    const res = await arbor.request('GET', `/api/v1/vm/${vmId}/events`);
    expect(res.status).toBe(200);
    const [requested, attached, booted, pauseRequested, paused] = res.json;
    expect(res.json.map((e: { type: string }) => e.type)).toEqual(['VmCreationRequested', 'VmNetworkAttached', 'VmBooted', 'VmPauseRequested', 'VmPaused']);
    expect(attached.metadata.causation_id).toBe(requested.event_id);
    expect(requested.metadata).toMatchObject({
      schema_version: 4, // VmCreationRequested: its env sealed, its SSH key generation recorded, how it reached its commit, its custom image
      correlation_id: '5d9c7c2e-0b8e-4f7e-9a51-0c3f3e6d2a11',
      actor_key_id: arbor.adminKey.slice(0, 36),
    });
    expect(booted.metadata.correlation_id).toBe(requested.metadata.correlation_id);
    expect(booted.metadata.causation_id).toBe(requested.event_id);
    expect(booted.metadata.actor_key_id).toBeNull();
    expect(paused.metadata.causation_id).toBe(pauseRequested.event_id);
    expect(paused.metadata.correlation_id).toBe(pauseRequested.metadata.correlation_id);
    expect(pauseRequested.metadata.correlation_id).not.toBe(requested.metadata.correlation_id);
    expect(requested.data.vm_id).toBe(vmId);
  });

  it('ties a branch together under one correlation id: the commit, its outcomes, then each child and its boot', async () => {
    const correlation = 'b7e2a0c4-3d1f-4c8e-9f6a-1e2d3c4b5a60';
    await arbor.request('PATCH', `/api/v1/vm/${vmId}/state`, { body: { state: 'Running' } });
    const branched = await arbor.request('POST', `/api/v1/vm/branch/by_vm/${vmId}?count=2`, { headers: { 'x-correlation-id': correlation } });
    expect(branched.status).toBe(201);
    const [first, second] = branched.json.vms.map((v: { vm_id: string }) => v.vm_id);
    type FeedEvent = { type: string; stream_id: string; event_id: string; data: { commit_id?: string }; metadata: { correlation_id: string; causation_id: string } };
    const feed = (await arbor.request('GET', '/api/v1/events?limit=1000')).json.events as FeedEvent[];
    // The request's own events and the worker's outcomes (other bookkeeping may share the id too).
    const steps = new Set(['VmCommitRequested', 'CommitCreated', 'VmCommitted', 'VmCreationRequested', 'VmBooted']);
    const related = feed.filter((e) => e.metadata.correlation_id === correlation && steps.has(e.type));
    expect(related.map((e) => `${e.stream_id}:${e.type}`)).toEqual([
      `vm-${vmId}:VmCommitRequested`,
      `commit-${related[0].data.commit_id}:CommitCreated`,
      `vm-${vmId}:VmCommitted`,
      `vm-${first}:VmCreationRequested`,
      `vm-${first}:VmBooted`,
      `vm-${second}:VmCreationRequested`,
      `vm-${second}:VmBooted`,
    ]);
    // Each outcome is caused by the intent it answers.
    const [commitRequested, created, committed, firstRequested, firstBooted, secondRequested, secondBooted] = related;
    expect([created, committed].map((e) => e.metadata.causation_id)).toEqual([commitRequested.event_id, commitRequested.event_id]);
    expect(firstBooted.metadata.causation_id).toBe(firstRequested.event_id);
    expect(secondBooted.metadata.causation_id).toBe(secondRequested.event_id);
  });

  it('pages the whole log by position with after/limit, without gaps or repeats', async () => {
    const all = (await arbor.request('GET', '/api/v1/events?limit=1000')).json;
    expect(all.has_more).toBe(false);
    const positions: number[] = [];
    let after = -1;
    for (;;) {
      const page = (await arbor.request('GET', `/api/v1/events?after=${after}&limit=2`)).json;
      positions.push(...page.events.map((e: { position: number }) => e.position));
      after = page.next_after;
      if (!page.has_more) break;
    }
    expect(positions).toEqual(all.events.map((e: { position: number }) => e.position));
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    expect(new Set(positions).size).toBe(positions.length);
  });

  it('filters by type and validates its query', async () => {
    const booted = (await arbor.request('GET', '/api/v1/events?type=VmBooted')).json.events;
    expect(booted.length).toBeGreaterThan(0);
    expect(booted.every((e: { type: string }) => e.type === 'VmBooted')).toBe(true);
    expect((await arbor.request('GET', '/api/v1/events?limit=0')).status).toBe(400);
    expect((await arbor.request('GET', '/api/v1/events?after=abc')).status).toBe(400);
  });
});
