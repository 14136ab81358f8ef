import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { EVENTS_DB } from '@arbor/application';
import { SqliteEventStore, type RecordedEvent } from '@arbor/event-store';
import { type ProcessTrio, type RunningProcess, startProcessTrio, stopProcess } from '../support/processes';

type Role = 'api' | 'projector' | 'worker';
const STEPS = ['ForkRequested', 'ForkVmStarted', 'ForkCommitted', 'ForkRepositoryReady'] as const;
const ROLES: Role[] = ['worker', 'api', 'projector'];

/**
 * The fork saga under `kill -9`: api, projector and vm-worker run as separate processes on one
 * data directory; each round forks a public tag and kills one of them the moment the fork reaches
 * a step, then starts it again (the client retries with the same X-Idempotency-Key when the api
 * died). Every round must end with exactly one fork, one VM, one commit and one tag made, the VM
 * running, and nothing more.
 */
describe('fork saga under kill -9 (separate processes, sandbox driver)', () => {
  let trio: ProcessTrio;
  let events: SqliteEventStore;

  beforeAll(async () => {
    trio = await startProcessTrio({ env: { ARBOR_WAIT_TIMEOUT_MS: '120000' }, dataDirs: 'shared' });
    events = SqliteEventStore.open(join(trio.dirs.api, EVENTS_DB));
    const { vm_id } = (await trio.call('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: {} })).json;
    await trio.call('PUT', `/api/v1/vm/${vm_id}/files`, { path: '/root/source.txt', content_b64: Buffer.from('source').toString('base64') });
    const { commit_id } = (await trio.call('POST', `/api/v1/vm/${vm_id}/commit`)).json;
    expect((await trio.call('POST', '/api/v1/repositories', { name: 'app' })).status).toBe(201);
    expect((await trio.call('POST', '/api/v1/repositories/app/tags', { tag_name: 'v1', commit_id })).status).toBe(201);
    expect((await trio.call('PATCH', '/api/v1/repositories/app/visibility', { is_public: true })).status).toBe(204);
  }, 320_000);

  afterAll(async () => {
    await events?.close();
    await trio?.stop();
  });

  /** Resolves with the first event of `type` appended after `position`, polling the shared log. */
  const eventAfter = async (position: number, type: string): Promise<RecordedEvent> => {
    for (;;) {
      const found = (await events.readAll({ after_position: position, max_count: 10_000 })).find((e) => e.type === type);
      if (found) return found;
      await new Promise((r) => setTimeout(r, 2));
    }
  };
  /** Per round: whether the kill landed before the fork was done (proof that kills hit mid-saga). */
  const killedMidFork: boolean[] = [];
  const restart: Record<Role, () => Promise<RunningProcess>> = {
    api: () => trio.startApi(),
    projector: () => trio.startProjector(),
    worker: () => trio.startWorker(),
  };

  it.each(ROLES.flatMap((role) => STEPS.map((step) => [role, step] as const)))('%s killed at %s: the fork finishes exactly once', async (role, step) => {
    const repo_name = `fork-${role}-${step}`.toLowerCase();
    const idempotency = randomUUID();
    const body = { source_org: 'default', source_repo: 'app', source_tag: 'v1', repo_name };
    const fork = () => trio.request('POST', '/api/v1/repositories/fork', { body, headers: { 'x-idempotency-key': idempotency } });
    const before = await events.headPosition();
    const first = fork().catch(() => null); // the api may die under it

    await eventAfter(before, step);
    await stopProcess(trio[role], 'SIGKILL');
    killedMidFork.push(!(await events.readAll({ after_position: before, max_count: 100_000 })).some((e) => e.type === 'RepoForked'));
    await restart[role]();

    let answer = await first;
    if (!answer || answer.status >= 500) answer = await fork();
    expect(answer.status).toBe(201);
    const { vm_id, commit_id, reference } = answer.json;
    expect(reference).toBe(`${repo_name}:v1`);

    const log = await events.readAll({ after_position: before, max_count: 100_000 });
    const count = (type: string, match: (e: RecordedEvent) => boolean = () => true) => log.filter((e) => e.type === type && match(e)).length;
    expect(count('ForkRequested')).toBe(1);
    expect(count('RepoForked')).toBe(1);
    expect(count('ForkAborted')).toBe(0);
    expect(count('VmCreationRequested')).toBe(1);
    expect(count('CommitCreated')).toBe(1);
    expect(count('RepositoryCreated', (e) => (e.data as { name: string }).name === repo_name)).toBe(1);
    expect(count('RepoTagCreated')).toBe(1);
    expect((await trio.call('GET', `/api/v1/repositories/${repo_name}/tags/v1`)).json.commit_id).toBe(commit_id);
    expect(await trio.driver.status(vm_id)).toBe('running');
    const file = await trio.call('GET', `/api/v1/vm/${vm_id}/files?path=/root/source.txt`);
    expect(Buffer.from(file.json.content_b64, 'base64').toString()).toBe('source');
    expect((await trio.call('DELETE', `/api/v1/vm/${vm_id}`)).status).toBe(200);
  }, 240_000);

  it('most kills landed before the fork was done', () => {
    expect(killedMidFork).toHaveLength(ROLES.length * STEPS.length);
    expect(killedMidFork.filter(Boolean).length).toBeGreaterThanOrEqual(killedMidFork.length / 2);
  });
});
