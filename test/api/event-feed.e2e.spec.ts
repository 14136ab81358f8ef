import { startTestArbor, type TestArbor } from '../support/arbor-harness';
import { InMemoryDriver } from '../../libs/hypervisor/src/memory/in-memory-driver';

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
    const [requested, booted, pauseRequested, paused] = res.json;
    expect(res.json.map((e: { type: string }) => e.type)).toEqual(['VmCreationRequested', 'VmBooted', 'VmPauseRequested', 'VmPaused']);
    expect(requested.metadata).toMatchObject({
      schema_version: 1,
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
    expect((await arbor.request('GET', '/api/v1/events?limit=0')).status).toBe(422);
    expect((await arbor.request('GET', '/api/v1/events?after=abc')).status).toBe(422);
  });
});
