import { randomUUID } from 'node:crypto';
import { PROJECTOR_CHECKPOINT } from '@arbor/application';
import { InMemoryDriver } from '@arbor/hypervisor';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';
import { issueKeyForNewOrg } from '../support/issue-key';

interface Answer {
  status: number;
  json: unknown;
}

/** One step of the history: the log position and time it ended at, and what every read answered then. */
interface Moment {
  step: string;
  position: number;
  time: string;
  answers: Map<string, Answer>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `as_of` on the VM, commit, tag and repository tag reads: a scripted history, every read recorded
 * live after each step, then asked again as of each step's position and time.
 */
describe('time travel: as_of on the VM, commit, tag and repository tag reads (HTTP)', () => {
  let arbor: TestArbor;
  let other: { key: string; org_id: string };
  const moments: Moment[] = [];
  let vmId: string | null = null;
  const [first, second] = [randomUUID(), randomUUID()];

  beforeAll(async () => {
    arbor = await startTestArbor({ driver: new InMemoryDriver() });
    other = await issueKeyForNewOrg(arbor.infra.eventStore);
  });
  afterAll(() => arbor.destroy());

  /** Every read `as_of` serves, as the admin key's org and as another org (`paths` of the VM once it exists). */
  const reads = (): [string, string | undefined][] => {
    const paths = ['/api/v1/vms', '/api/v1/commits', '/api/v1/commits?limit=1&offset=1', '/api/v1/commits/public', '/api/v1/commit_tags', '/api/v1/commit_tags/release'];
    paths.push('/api/v1/repositories/app/tags', '/api/v1/repositories/app/tags/v1');
    paths.push(...[first, second].map((id) => `/api/v1/vm/commits/${id}/parents`));
    if (vmId) paths.push(`/api/v1/vm/${vmId}/status`, `/api/v1/vm/${vmId}/metadata`);
    return paths.flatMap((path): [string, string | undefined][] => [
      [path, undefined],
      [path, other.key],
    ]);
  };

  const ask = async (path: string, key: string | undefined, as_of?: string): Promise<Answer> => {
    const query = as_of === undefined ? '' : `${path.includes('?') ? '&' : '?'}as_of=${encodeURIComponent(as_of)}`;
    const res = await arbor.request('GET', path + query, { key });
    return { status: res.status, json: res.json };
  };

  /** Waits until nothing more is appended and the read models have caught up: the log ends here. */
  const settled = async (): Promise<number> => {
    for (let seen = -2; ; await sleep(100)) {
      const head = await arbor.infra.eventStore.headPosition();
      if (head === seen && (await arbor.infra.readModels.getCheckpoint(PROJECTOR_CHECKPOINT)) === head) return head;
      seen = head;
    }
  };

  const record = async (step: string) => {
    const position = await settled();
    const [last] = await arbor.infra.eventStore.readAll({ after_position: position - 1, max_count: 1 });
    const answers = new Map<string, Answer>();
    for (const [path, key] of reads()) answers.set(`${key ?? 'admin'} ${path}`, await ask(path, key));
    moments.push({ step, position, time: last.created_at, answers });
    // The next step's events are recorded at a later millisecond: this step's time names its end alone.
    await sleep(5);
  };

  const expectOk = async (method: string, path: string, body?: unknown) => {
    const res = await arbor.request(method, path, { body });
    expect(res.status).toBeLessThan(300);
    return res;
  };

  it('records a scripted history, answering every read live after each step', async () => {
    await record('start');
    vmId = await arbor.bootVm();
    await record('create a VM');
    await expectOk('PATCH', `/api/v1/vm/${vmId}/label`, { labels: { team: 'audit' } });
    await record('label it');
    await expectOk('POST', `/api/v1/vm/${vmId}/commit`, { commit_id: first, name: 'first' });
    await record('commit it');
    await expectOk('POST', '/api/v1/commit_tags', { tag_name: 'release', commit_id: first, description: 'v1' });
    await record('tag the commit');
    await expectOk('POST', '/api/v1/repositories', { name: 'app' });
    await record('make a repository');
    await expectOk('POST', '/api/v1/repositories/app/tags', { tag_name: 'v1', commit_id: first, description: 'first' });
    await record('tag the commit in the repository');
    await expectOk('POST', `/api/v1/vm/${vmId}/commit`, { commit_id: second, name: 'second' });
    await record('commit it again');
    await expectOk('PATCH', '/api/v1/commit_tags/release', { commit_id: second });
    await record('move the tag');
    await expectOk('PATCH', '/api/v1/repositories/app/tags/v1', { commit_id: second, description: 'second' });
    await record('move the repository tag');
    await expectOk('PATCH', `/api/v1/commits/${first}`, { is_public: true });
    await record('make the first commit public');
    await expectOk('DELETE', `/api/v1/vm/${vmId}`);
    await record('delete the VM');
    await expectOk('DELETE', '/api/v1/commit_tags/release');
    await record('delete the tag');
    await expectOk('DELETE', '/api/v1/repositories/app/tags/v1');
    await record('delete the repository tag');

    // The history is what it says: each step changed what the reads answer.
    for (let i = 1; i < moments.length; i++) expect(moments[i].answers).not.toEqual(moments[i - 1].answers);
  });

  it.each([
    ['position', (m: Moment) => String(m.position)],
    ['time', (m: Moment) => m.time],
  ])('answers every read as of each step by its %s exactly as it answered live then', async (_by, asOf) => {
    for (const moment of moments) {
      for (const [key, live] of moment.answers) {
        const [who, path] = key.split(' ');
        expect({ step: moment.step, read: key, answer: await ask(path, who === 'admin' ? undefined : other.key, asOf(moment)) }).toEqual({ step: moment.step, read: key, answer: live });
      }
    }
  });

  it('names a time by the last event recorded at or before it', async () => {
    const tagged = moments.find((m) => m.step === 'tag the commit')!;
    const between = new Date(Date.parse(tagged.time) + 1).toISOString();
    expect(await ask('/api/v1/commit_tags/release', undefined, between)).toEqual(tagged.answers.get('admin /api/v1/commit_tags/release'));
    // A time without an offset is UTC; before the first event, nothing existed.
    expect(await ask('/api/v1/vms', undefined, between.replace('Z', ''))).toEqual(tagged.answers.get('admin /api/v1/vms'));
    expect(await ask('/api/v1/vms', undefined, '2000-01-01')).toEqual({ status: 200, json: [] });
  });

  it('keeps the org wall in the past: another org never saw the VM, its private commit or its tag', async () => {
    const tagged = moments.find((m) => m.step === 'tag the commit')!;
    const at = String(tagged.position);
    expect((await ask(`/api/v1/vm/${vmId}/status`, undefined, at)).status).toBe(200);
    expect((await ask(`/api/v1/vm/${vmId}/status`, other.key, at)).status).toBe(404);
    expect((await ask(`/api/v1/vm/${vmId}/metadata`, other.key, at)).status).toBe(404);
    expect((await ask('/api/v1/vms', other.key, at)).json).toEqual([]);
    expect((await ask(`/api/v1/vm/commits/${first}/parents`, other.key, at)).status).toBe(404);
    expect((await ask('/api/v1/commit_tags/release', other.key, at)).status).toBe(404);
    const repoTagged = String(moments.find((m) => m.step === 'tag the commit in the repository')!.position);
    expect((await ask('/api/v1/repositories/app/tags/v1', undefined, repoTagged)).json).toMatchObject({ commit_id: first, description: 'first' });
    expect(await ask('/api/v1/repositories/app/tags/v1', other.key, repoTagged)).toEqual({ status: 404, json: { error: 'repository not found', success: false } });
    // Once public, the first commit was readable by every org, as of then: by its id in the log
    // (the id chosen for it is its own org's name for it).
    const published = String(moments.find((m) => m.step === 'make the first commit public')!.position);
    const created = (await arbor.infra.eventStore.readAll({ max_count: 10_000 })).find((e) => e.type === 'CommitCreated' && (e.data as { name: string }).name === 'first')!;
    const firstInLog = (created.data as { commit_id: string }).commit_id;
    expect((await ask(`/api/v1/vm/commits/${firstInLog}/parents`, other.key, at)).status).toBe(404);
    expect((await ask(`/api/v1/vm/commits/${firstInLog}/parents`, other.key, published)).status).toBe(200);
    expect((await ask(`/api/v1/vm/commits/${first}/parents`, other.key, published)).status).toBe(404);
    // Before the VM existed, it was not there for its own org either.
    expect((await ask(`/api/v1/vm/${vmId}/status`, undefined, String(moments[0].position))).status).toBe(404);
  });

  it('refuses an as_of that names no position of the log (400)', async () => {
    const head = await arbor.infra.eventStore.headPosition();
    const future = new Date(Date.now() + 3_600_000).toISOString();
    for (const bad of ['abc', '-1', '1.5', '0x10', '2026-13-01T00:00:00Z', '2026-02-30', '2026-01-01T25:00:00Z', '2026-01-01T10:00:00+2', String(head + 1000), future]) {
      for (const path of ['/api/v1/vms', `/api/v1/vm/${vmId}/status`, '/api/v1/commits', '/api/v1/commits/public', '/api/v1/commit_tags', `/api/v1/vm/commits/${first}/parents`]) {
        const res = await arbor.request('GET', `${path}?as_of=${encodeURIComponent(bad)}`);
        expect({ bad, path, status: res.status, error: res.json?.error }).toEqual({ bad, path, status: 400, error: expect.stringMatching(/as_of/) });
      }
    }
    // An empty as_of is no as_of: the live read models.
    expect((await arbor.request('GET', '/api/v1/vms?as_of=')).status).toBe(200);
  });
});
