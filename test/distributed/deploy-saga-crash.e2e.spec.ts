import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { EVENTS_DB } from '@arbor/application';
import { SqliteEventStore, type RecordedEvent } from '@arbor/event-store';
import { commitDeployedApp, DEPLOYED_SETTINGS, GUEST_HTTP_CLIENT } from '../support/deploy-app';
import { GitHttpServer } from '../support/git-http-server';
import { pollUntil } from '../support/poll-until';
import { type ProcessTrio, startProcessTrio, stopProcess } from '../support/processes';

/**
 * The deploy saga under `kill -9` (api, projector and vm-worker as separate processes, sandbox
 * driver): a deploy whose api or worker dies at a step finishes, or fails saying why; it never
 * hangs, and nothing is made twice.
 */
describe('deploy saga under kill -9 (separate processes, sandbox driver)', () => {
  let trio: ProcessTrio;
  let events: SqliteEventStore;
  let host: GitHttpServer;

  beforeAll(async () => {
    host = await GitHttpServer.start();
    commitDeployedApp(host, 'acme/web');
    commitDeployedApp(host, 'acme/web', 'slow-install', { install: 'echo "installing slowly"; sleep 30\n' });
    trio = await startProcessTrio({ env: { ARBOR_WAIT_TIMEOUT_MS: '120000', ARBOR_GIT_BASE_URL: host.url, ARBOR_DEPLOY_START_SECS: '1', ARBOR_RESYNC_INTERVAL_MS: '1000' }, dataDirs: 'shared' });
    events = SqliteEventStore.open(join(trio.dirs.api, EVENTS_DB));
  }, 320_000);

  afterAll(async () => {
    await events?.close();
    await trio?.stop();
    await host?.stop();
  });

  /** Resolves with the first event of `type` appended after `position`, polling the shared log. */
  const eventAfter = async (position: number, type: string): Promise<RecordedEvent> => {
    for (;;) {
      const found = (await events.readAll({ after_position: position, max_count: 10_000 })).find((e) => e.type === type);
      if (found) return found;
      await new Promise((r) => setTimeout(r, 2));
    }
  };
  const deploy = (name: string, idempotency: string, branch = 'main') =>
    trio.request('POST', '/api/v1/deploy', { body: { repo: 'acme/web', name, branch, settings: DEPLOYED_SETTINGS }, headers: { 'x-idempotency-key': idempotency } });
  const project = (id: string) => trio.call('GET', `/arbor/v1/projects/${id}`);
  const settledAs = async (id: string, status: string) => {
    await pollUntil(async () => (await project(id)).json.status === status, { timeoutMs: 120_000, intervalMs: 200 });
    return (await project(id)).json;
  };
  const count = async (after: number, type: string) => (await events.readAll({ after_position: after, max_count: 100_000 })).filter((e) => e.type === type).length;
  const get = async (vm_id: string, path = '/') => (await trio.call('POST', `/api/v1/vm/${vm_id}/exec`, { command: ['perl', '-e', GUEST_HTTP_CLIENT, '8080', path] })).json;

  it('the api killed once the project is asked for: the retry answers the same project, its VM is made once, and it runs', async () => {
    const before = await events.headPosition();
    const idempotency = randomUUID();
    const first = deploy('api-killed', idempotency).catch(() => null);
    await eventAfter(before, 'ProjectRequested');
    await stopProcess(trio.api, 'SIGKILL');
    await trio.startApi();
    let answer = await first;
    if (!answer || answer.status >= 500) answer = await deploy('api-killed', idempotency);
    expect(answer.status).toBe(202);
    await settledAs(answer.json.project_id, 'running');
    expect([await count(before, 'ProjectRequested'), await count(before, 'VmCreationRequested'), await count(before, 'ProjectSourceCopied')]).toEqual([1, 1, 1]);
    expect((await get(answer.json.vm_id)).exit_code).toBe(0);
    expect((await trio.call('DELETE', `/api/v1/vm/${answer.json.vm_id}`)).status).toBe(200);
  }, 240_000);

  it('the worker killed while it clones: the next one clones again and the deploy runs', async () => {
    const before = await events.headPosition();
    const accepted = await deploy('worker-killed-cloning', randomUUID());
    expect(accepted.status).toBe(202);
    await eventAfter(before, 'ProjectRequested');
    await stopProcess(trio.worker, 'SIGKILL');
    await trio.startWorker();
    await settledAs(accepted.json.project_id, 'running');
    expect([await count(before, 'VmCreationRequested'), await count(before, 'ProjectSourceCopied'), await count(before, 'ProjectFailed')]).toEqual([1, 1, 0]);
    expect((await get(accepted.json.vm_id)).stdout).toMatch(/built from deps\n$/);
    expect((await trio.call('DELETE', `/api/v1/vm/${accepted.json.vm_id}`)).status).toBe(200);
  }, 240_000);

  it('the worker killed while a step runs: the step is not run twice, the deploy fails saying the worker cut it off', async () => {
    const before = await events.headPosition();
    const accepted = await deploy('worker-killed-installing', randomUUID(), 'slow-install');
    await eventAfter(before, 'ExecStarted');
    await stopProcess(trio.worker, 'SIGKILL');
    await trio.startWorker();
    const failed = await settledAs(accepted.json.project_id, 'failed');
    expect(failed.reason).toMatch(/^the install command was cut off: the worker restarted while the command ran/);
    expect(await count(before, 'ExecStarted')).toBe(1);
    expect((await trio.call('DELETE', `/api/v1/vm/${accepted.json.vm_id}`)).status).toBe(200);
  }, 240_000);

  it('the worker killed while the project runs: the command runs on, a new exec follows it, and its later exit still ends the project', async () => {
    const before = await events.headPosition();
    const accepted = await deploy('worker-killed-running', randomUUID());
    const { project_id, vm_id } = accepted.json;
    await settledAs(project_id, 'running');
    await stopProcess(trio.worker, 'SIGKILL');
    await trio.startWorker();
    await eventAfter(before, 'ProjectRunFollowed');
    expect((await project(project_id)).json.status).toBe('running');
    expect((await get(vm_id)).stdout).toMatch(/built from deps\n$/);
    expect((await get(vm_id, '/quit')).exit_code).toBe(0);
    expect(await settledAs(project_id, 'failed')).toMatchObject({ reason: 'the run command exited with code 3' });
    expect((await trio.call('DELETE', `/api/v1/vm/${vm_id}`)).status).toBe(200);
  }, 240_000);
});
