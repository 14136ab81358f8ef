import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EVENTS_DB } from '@arbor/application';
import { SqliteEventStore, type RecordedEvent } from '@arbor/event-store';
import { issueKeyForNewOrg } from '../support/issue-key';
import { pollUntil } from '../support/poll-until';
import { type ProcessTrio, type RunningProcess, startProcessTrio, stopProcess } from '../support/processes';

type Role = 'api' | 'projector' | 'worker';
const STEPS = ['ForkRequested', 'ForkVmStarted', 'ForkCommitted', 'ForkRepositoryReady'] as const;
const ROLES: Role[] = ['worker', 'api', 'projector'];
/**
 * How a round makes the fork fail: its target tag taken while its VM boots (409), or its VM's
 * commit failing on the host (500): a directory already where the snapshot is to be published.
 */
const ABORTS = ['tag taken meanwhile', 'commit fails on the host'] as const;
/** Where the worker is killed in a failing fork: at the abort, or while the clean-up deletes the fork's VM. */
const ABORT_KILLS = ['ForkAborted', "the clean-up's VM deletion"] as const;

/**
 * The fork saga under `kill -9`: api, projector and vm-worker run as separate processes on one
 * data directory; each round forks a public tag and kills one of them the moment the fork reaches
 * a step, then starts it again (the client retries with the same X-Idempotency-Key when the api
 * died). Every round must end with exactly one fork, one VM, one commit and one tag made, the VM
 * running, and nothing more. Failing forks (the target tag taken meanwhile, the VM's commit
 * refused) with the worker killed at ForkAborted or during the clean-up's VM deletion end with
 * exactly one ForkFailed and nothing of the fork left; and another org forks the public repository
 * with its worker killed mid-way.
 */
describe('fork saga under kill -9 (separate processes, sandbox driver)', () => {
  let trio: ProcessTrio;
  let events: SqliteEventStore;
  let sourceCommit: string;

  beforeAll(async () => {
    trio = await startProcessTrio({ env: { ARBOR_WAIT_TIMEOUT_MS: '120000' }, dataDirs: 'shared' });
    events = SqliteEventStore.open(join(trio.dirs.api, EVENTS_DB));
    const { vm_id } = (await trio.call('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: {} })).json;
    await trio.call('PUT', `/api/v1/vm/${vm_id}/files`, { path: '/root/source.txt', content_b64: Buffer.from('source').toString('base64') });
    const { commit_id } = (await trio.call('POST', `/api/v1/vm/${vm_id}/commit`)).json;
    sourceCommit = commit_id;
    expect((await trio.call('POST', '/api/v1/repositories', { name: 'app' })).status).toBe(201);
    expect((await trio.call('POST', '/api/v1/repositories/app/tags', { tag_name: 'v1', commit_id })).status).toBe(201);
    expect((await trio.call('PATCH', '/api/v1/repositories/app/visibility', { is_public: true })).status).toBe(204);
  }, 320_000);

  afterAll(async () => {
    await events?.close();
    await trio?.stop();
  });

  /**
   * Resolves with the first event of `type` (and `match`) appended after `position`, polling the
   * shared log; after two minutes fails with what the log holds instead (a VM that failed to boot
   * under load, say), rather than waiting for ever.
   */
  const eventAfter = async (position: number, type: string, match: (e: RecordedEvent) => boolean = () => true): Promise<RecordedEvent> => {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const log = await events.readAll({ after_position: position, max_count: 10_000 });
      const found = log.find((e) => e.type === type && match(e));
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no ${type} in two minutes; the log after ${position}: ${log.map((e) => `${e.type} ${JSON.stringify(e.data).slice(0, 700)}`).join('; ')}`);
      await new Promise((r) => setTimeout(r, 2));
    }
  };
  /** The ids of the commits the caller's org sees (GET /commits). */
  const commitsOf = async (call: (method: string, path: string) => Promise<{ json: any }>): Promise<string[]> =>
    ((await call('GET', '/api/v1/commits?limit=100')).json.commits as { commit_id: string }[]).map((commit) => commit.commit_id);
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

  it.each(ABORTS.flatMap((cause) => ABORT_KILLS.map((kill) => [cause, kill] as const)))(
    'a fork that fails (%s), the worker killed at %s: exactly one ForkFailed, nothing of the fork left',
    async (cause, kill) => {
      const repo_name = `failing-${ABORTS.indexOf(cause)}-${ABORT_KILLS.indexOf(kill)}`;
      const before = await events.headPosition();
      const answer = trio.request('POST', '/api/v1/repositories/fork', { body: { source_org: 'default', source_repo: 'app', source_tag: 'v1', repo_name } });
      const request = (await eventAfter(before, 'ForkRequested')).data as { fork_id: string; vm_id: string; commit_id: string; repo_id: string };
      const { fork_id, vm_id, commit_id } = request;
      // While the fork's VM boots (seconds), before its commit is asked for:
      const blocker = join(trio.dirs.worker, 'snapshots', 'sandbox', commit_id);
      if (cause === 'tag taken meanwhile') {
        // someone of the org takes its target, the repository and the tag;
        expect((await trio.call('POST', '/api/v1/repositories', { name: repo_name })).status).toBe(201);
        expect((await trio.call('POST', `/api/v1/repositories/${repo_name}/tags`, { tag_name: 'v1', commit_id: sourceCommit })).status).toBe(201);
      } else {
        // or something on the host sits where the snapshot is to be published, so taking it fails.
        mkdirSync(blocker, { recursive: true });
        writeFileSync(join(blocker, 'in-the-way'), '');
      }

      if (kill === 'ForkAborted') await eventAfter(before, 'ForkAborted', (e) => e.stream_id === `fork-${fork_id}`);
      else await eventAfter(before, 'VmDeletionRequested', (e) => e.stream_id === `vm-${vm_id}`);
      await stopProcess(trio.worker, 'SIGKILL');
      await trio.startWorker();

      const answered = await answer;
      if (cause === 'commit fails on the host') rmSync(blocker, { recursive: true, force: true });
      if (cause === 'tag taken meanwhile') {
        expect({ status: answered.status, json: answered.json }).toEqual({ status: 409, json: { error: `tag 'v1' already exists in repository '${repo_name}'`, success: false } });
      } else {
        expect(answered.status).toBe(500);
        expect(answered.json).toEqual({ error: expect.stringMatching(new RegExp(`^ENOTEMPTY: directory not empty, rename '.*/${commit_id}\\.partial' -> '.*/${commit_id}'$`)), success: false });
      }

      const log = await events.readAll({ after_position: before, max_count: 100_000 });
      const count = (type: string, match: (e: RecordedEvent) => boolean = () => true) => log.filter((e) => e.type === type && match(e)).length;
      const onFork = (e: RecordedEvent) => e.stream_id === `fork-${fork_id}`;
      expect([count('ForkAborted', onFork), count('ForkFailed', onFork), count('RepoForked', onFork)]).toEqual([1, 1, 0]);
      // The fork's VM is gone from the log, the read models and the host.
      expect(count('VmDeleted', (e) => e.stream_id === `vm-${vm_id}`)).toBe(1);
      expect((await trio.call('GET', `/api/v1/vm/${vm_id}/status`)).status).toBe(404);
      expect(await trio.driver.status(vm_id)).toBeNull();
      // Its commit: deleted once made (tag taken; the worker then frees its snapshot), never made (the commit failed).
      expect(await commitsOf(trio.call)).not.toContain(commit_id);
      expect(count('CommitDeleted', (e) => e.stream_id === `commit-${commit_id}`)).toBe(cause === 'tag taken meanwhile' ? 1 : 0);
      await pollUntil(async () => (await trio.driver.getSnapshot(commit_id)) === null);
      // No repository of the fork's own: the taken one stays as it was taken, nothing else was made.
      expect(count('RepositoryCreated', (e) => (e.data as { repo_id: string }).repo_id === request.repo_id)).toBe(0);
      if (cause === 'tag taken meanwhile') {
        expect((await trio.call('GET', `/api/v1/repositories/${repo_name}/tags`)).json.tags).toEqual([expect.objectContaining({ tag_name: 'v1', commit_id: sourceCommit })]);
        expect((await trio.call('DELETE', `/api/v1/repositories/${repo_name}`)).status).toBe(204);
      } else {
        expect((await trio.call('GET', `/api/v1/repositories/${repo_name}`)).status).toBe(404);
      }
    },
    240_000,
  );

  it("another org forks the public repository, its worker killed mid-way: the fork is that org's, made once", async () => {
    const other = await issueKeyForNewOrg(events, 'forker');
    await pollUntil(async () => (await trio.request('GET', '/arbor/v1/whoami', { key: other.key })).status === 200);
    const idempotency = randomUUID();
    const fork = () =>
      trio.request('POST', '/api/v1/repositories/fork', { key: other.key, body: { source_org: 'default', source_repo: 'app', source_tag: 'v1' }, headers: { 'x-idempotency-key': idempotency } });
    const before = await events.headPosition();
    const first = fork();
    await eventAfter(before, 'ForkVmStarted');
    await stopProcess(trio.worker, 'SIGKILL');
    await trio.startWorker();

    const answer = await first;
    expect(answer.status).toBe(201);
    expect(answer.json).toEqual({ vm_id: expect.any(String), commit_id: expect.any(String), repo_name: 'app', tag_name: 'v1', reference: 'app:v1' });
    const { vm_id, commit_id } = answer.json;
    const log = await events.readAll({ after_position: before, max_count: 100_000 });
    const count = (type: string) => log.filter((e) => e.type === type).length;
    expect([count('ForkRequested'), count('RepoForked'), count('ForkAborted'), count('VmCreationRequested'), count('CommitCreated'), count('RepositoryCreated'), count('RepoTagCreated')]).toEqual([1, 1, 0, 1, 1, 1, 1]);
    // Everything made is the other org's: its VM (running the source's files), its commit, its repository and tag.
    expect(log.filter((e) => ['ForkRequested', 'VmCreationRequested', 'CommitCreated', 'RepositoryCreated', 'RepoTagCreated'].includes(e.type)).map((e) => e.metadata.org_id)).toEqual(Array(5).fill(other.org_id));
    expect((await trio.request('GET', '/api/v1/repositories/app/tags/v1', { key: other.key })).json.commit_id).toBe(commit_id);
    expect(await commitsOf((method, path) => trio.request(method, path, { key: other.key }))).toContain(commit_id);
    expect(await trio.driver.status(vm_id)).toBe('running');
    const file = await trio.request('GET', `/api/v1/vm/${vm_id}/files?path=/root/source.txt`, { key: other.key });
    expect(Buffer.from(file.json.content_b64, 'base64').toString()).toBe('source');
    expect((await trio.request('DELETE', `/api/v1/vm/${vm_id}`, { key: other.key })).status).toBe(200);
  }, 240_000);

  it('most kills landed before the fork was done', () => {
    expect(killedMidFork).toHaveLength(ROLES.length * STEPS.length);
    expect(killedMidFork.filter(Boolean).length).toBeGreaterThanOrEqual(killedMidFork.length / 2);
  });
});
