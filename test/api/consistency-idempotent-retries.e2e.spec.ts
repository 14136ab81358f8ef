import { randomUUID } from 'node:crypto';
import { InMemoryDriver } from '@arbor/hypervisor';
import { startTestArbor, type TestArbor, type TestResponse } from '../support/arbor-harness';

const WAIT_TIMEOUT_MS = 1500;
const SLOW_MS = 2500;
/** Far below the 30 s the interceptor used to wait on a conflict, far above any loaded machine's 409. */
const CONFLICT_WAIT_BOUND_MS = 10_000;

/**
 * X-Idempotency-Key retries after the first attempt timed out (504, so no response was recorded):
 * the retry carries on from the events its first attempt appended and answers the first result,
 * as SDK clients expect when they retry a 5xx with the same key. Genuine conflicts answer at once.
 */
describe('idempotent retries after a timeout (HTTP)', () => {
  let arbor: TestArbor;
  let driver: InMemoryDriver;

  beforeAll(async () => {
    driver = new InMemoryDriver();
    arbor = await startTestArbor({ driver, env: { ARBOR_WAIT_TIMEOUT_MS: String(WAIT_TIMEOUT_MS) } });
  });
  afterAll(() => arbor.destroy());

  /** Sends the same request until it is answered with something else than 504, as an SDK retries. */
  const untilAnswered = async (send: () => Promise<TestResponse>) => {
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 8; attempt++) {
      const res = await send();
      statuses.push(res.status);
      if (res.status !== 504) return { res, statuses };
    }
    throw new Error(`still 504 after ${statuses.length} attempts`);
  };
  const newVm = () => arbor.bootVm();

  it('new_root?wait_boot=true retried after a 504 answers 201 with the VM the first attempt asked for', async () => {
    const before = (await arbor.request('GET', '/api/v1/vms')).json.length;
    driver.slowDown('create', SLOW_MS);
    const headers = { 'x-idempotency-key': randomUUID() };
    try {
      const { res, statuses } = await untilAnswered(() => arbor.request('POST', '/api/v1/vm/new_root?wait_boot=true', { headers, body: { vm_config: {} } }));
      expect(statuses[0]).toBe(504);
      expect(res.status).toBe(201);
      const vms = (await arbor.request('GET', '/api/v1/vms')).json as { vm_id: string; state: string }[];
      expect(vms).toHaveLength(before + 1);
      expect(vms.find((vm) => vm.vm_id === res.json.vm_id)?.state).toBe('running');
      expect(driver.calls.filter((c) => c === `create ${res.json.vm_id}`)).toHaveLength(1);
      // Recorded now: the next retry is answered from the record.
      const replay = await arbor.request('POST', '/api/v1/vm/new_root?wait_boot=true', { headers, body: { vm_config: {} } });
      expect({ status: replay.status, body: replay.json, replayed: replay.headers.get('idempotent-replayed') }).toEqual({ status: 201, body: res.json, replayed: 'true' });
    } finally {
      driver.slowDown('create', 0);
    }
  });

  it('PATCH state retried after a 504 waits for the pause the first attempt asked for, then answers 200', async () => {
    const vm = await newVm();
    driver.slowDown('pause', SLOW_MS);
    const headers = { 'x-idempotency-key': randomUUID() };
    try {
      const { res, statuses } = await untilAnswered(() => arbor.request('PATCH', `/api/v1/vm/${vm}/state`, { headers, body: { state: 'Paused' } }));
      expect(statuses[0]).toBe(504);
      expect(res.status).toBe(200);
      expect(res.text).toBe('');
      expect((await arbor.request('GET', `/api/v1/vm/${vm}/status`)).json.state).toBe('paused');
      expect(driver.calls.filter((c) => c === `pause ${vm}`)).toHaveLength(1);
    } finally {
      driver.slowDown('pause', 0);
    }
  });

  it('DELETE retried after a 504 waits for the deletion the first attempt asked for, then answers {vm_id}', async () => {
    const vm = await newVm();
    driver.slowDown('destroy', SLOW_MS);
    const headers = { 'x-idempotency-key': randomUUID() };
    try {
      const { res, statuses } = await untilAnswered(() => arbor.request('DELETE', `/api/v1/vm/${vm}`, { headers }));
      expect(statuses[0]).toBe(504);
      expect({ status: res.status, body: res.json }).toEqual({ status: 200, body: { vm_id: vm } });
      expect(driver.calls.filter((c) => c === `destroy ${vm}`)).toHaveLength(1);
    } finally {
      driver.slowDown('destroy', 0);
    }
  });

  it('DELETE retried after a 504, once the deletion has finished, still answers {vm_id}', async () => {
    const vm = await newVm();
    driver.slowDown('destroy', SLOW_MS);
    const headers = { 'x-idempotency-key': randomUUID() };
    try {
      expect((await arbor.request('DELETE', `/api/v1/vm/${vm}`, { headers })).status).toBe(504);
      // The first attempt's deletion finishes on its own; only then does the client retry.
      for (let i = 0; i < 100 && !(await arbor.request('GET', `/api/v1/vm/${vm}/metadata`)).json.deleted_at; i++) {
        await new Promise((r) => setTimeout(r, 100));
      }
      expect((await arbor.request('GET', `/api/v1/vm/${vm}/metadata`)).json.deleted_at).toEqual(expect.any(String));
      const retry = await arbor.request('DELETE', `/api/v1/vm/${vm}`, { headers });
      expect({ status: retry.status, body: retry.json }).toEqual({ status: 200, body: { vm_id: vm } });
      // Without the key it is a new request for a VM that is gone: answered like a missing one.
      expect((await arbor.request('DELETE', `/api/v1/vm/${vm}`)).status).toBe(403);
    } finally {
      driver.slowDown('destroy', 0);
    }
  });

  it('a commit under a client-chosen id retried after a 504 answers 201 with that id, not "already exists"', async () => {
    const vm = await newVm();
    const commit_id = randomUUID();
    driver.slowDown('commit', SLOW_MS);
    const headers = { 'x-idempotency-key': randomUUID() };
    try {
      const { res, statuses } = await untilAnswered(() => arbor.request('POST', `/api/v1/vm/${vm}/commit`, { headers, body: { commit_id } }));
      expect(statuses[0]).toBe(504);
      expect({ status: res.status, body: res.json }).toEqual({ status: 201, body: { commit_id } });
      expect(driver.calls.filter((c) => c === `commit ${vm}`)).toHaveLength(1);
      // Once made, the id is taken for any new request, this VM's included.
      const again = await arbor.request('POST', `/api/v1/vm/${vm}/commit`, { body: { commit_id } });
      expect(again.status).toBe(409);
    } finally {
      driver.slowDown('commit', 0);
    }
  });

  it('a genuine conflict sent with a key answers 409 at once', async () => {
    const vm = await newVm();
    const commit_id = (await arbor.request('POST', `/api/v1/vm/${vm}/commit`)).json.commit_id;
    const child = (await arbor.request('POST', '/api/v1/vm/from_commit', { body: { commit_id } })).json.vm_id;
    expect(child).toEqual(expect.any(String));
    const started = Date.now();
    const refused = await arbor.request('DELETE', `/api/v1/commits/${commit_id}`, { headers: { 'x-idempotency-key': randomUUID() } });
    expect({ status: refused.status, body: refused.json }).toEqual({ status: 409, body: { error: 'commit still has 1 active VM(s)', success: false } });
    expect(Date.now() - started).toBeLessThan(CONFLICT_WAIT_BOUND_MS);

    const tag = `t-${randomUUID().slice(0, 8)}`;
    expect((await arbor.request('POST', '/api/v1/commit_tags', { body: { tag_name: tag, commit_id } })).status).toBe(201);
    const again = Date.now();
    const taken = await arbor.request('POST', '/api/v1/commit_tags', { headers: { 'x-idempotency-key': randomUUID() }, body: { tag_name: tag, commit_id } });
    expect(taken.status).toBe(409);
    expect(Date.now() - again).toBeLessThan(CONFLICT_WAIT_BOUND_MS);
  });
});
