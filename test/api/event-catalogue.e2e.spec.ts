import { randomUUID } from 'node:crypto';
import { AggregateRepository, newCommandContext } from '@arbor/application';
import { EVENT_CATALOGUE, Exec, execKey, parseSshPublicKey } from '@arbor/domain';
import { InMemoryDriver } from '@arbor/hypervisor';
import { runAdmin } from '../../apps/admin/src/run-admin';
import { commitDeployedApp } from '../support/deploy-app';
import { GitHttpServer } from '../support/git-http-server';
import { runOperatorCommand } from '../../apps/api/src/operator/operator-command';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';
import { catalogueMismatches } from '../support/event-catalogue-check';
import { issueKeyForNewOrg } from '../support/issue-key';
import { startMailCatcher, type MailCatcher } from '../support/mail-catcher';
import { pollUntil } from '../support/poll-until';
import { freePort } from '../support/processes';
import { newSshPublicKey } from '../support/ssh-keys';
import { tarOf } from '../support/tar-archives';
import { WebhookReceiver } from '../support/webhook-receiver';

/**
 * Event types this workload does not make: ProjectRunFollowed (a deploy's run command outliving a
 * killed worker: test/distributed/deploy-saga-crash makes it).
 */
const NOT_PRODUCED = ['ProjectRunFollowed'];
/** Appended, but never shown in the feed (internal bookkeeping). */
const NOT_IN_FEED = ['IdempotentResponseRecorded'];

/**
 * The event catalogue against a whole log: a workload that makes every event type (VMs and their
 * operations, commits, tags, repositories, a fork that works and one that fails, env vars, execs,
 * one lost with its worker, files, base images (built, booted, published, deleted; one that fails),
 * idempotent retries, two commits racing for one VM, a sign-up by mail, members and keys, an SSH
 * key rotation and unbinding), then every event of the log and of the feed validates against its
 * type's schema, secrets show redacted, and the catalogue is served and in the OpenAPI document.
 * (Every suite's own log is checked too, as the harness stops.)
 */
describe('the event catalogue (HTTP, machines in memory)', () => {
  let arbor: TestArbor;
  let driver: InMemoryDriver;
  let mail: MailCatcher;
  let git: GitHttpServer;
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    driver = new InMemoryDriver();
    mail = await startMailCatcher();
    git = await GitHttpServer.start();
    commitDeployedApp(git, 'acme/web');
    const port = await freePort();
    const identity = { PORT: String(port), ARBOR_PUBLIC_URL: `http://127.0.0.1:${port}`, ARBOR_SMTP_URL: mail.url, ARBOR_KEY_USAGE_FLUSH_MS: '100' };
    arbor = await startTestArbor({ driver, env: { ARBOR_RESYNC_INTERVAL_MS: '100', ARBOR_WEBHOOK_ATTEMPTS: '2', ARBOR_WEBHOOK_RETRY_BASE_MS: '20', ARBOR_WEBHOOK_ALLOW_PRIVATE: 'true', ARBOR_EXEC_OUTPUT_MAX_BYTES: '8', ARBOR_GIT_BASE_URL: git.url, ARBOR_DEPLOY_START_SECS: '1', ...identity } });
    const other = await issueKeyForNewOrg(arbor.infra.eventStore, 'other');
    const ok = async (method: string, path: string, body?: unknown, options: { key?: string; status?: number; headers?: Record<string, string> } = {}) => {
      const res = await arbor.request(method, `/api/v1${path}`, { body, key: options.key, headers: options.headers });
      expect({ path, status: res.status }).toEqual({ path, status: options.status ?? (method === 'POST' ? 201 : res.status < 300 ? res.status : 200) });
      return res.json;
    };
    // Webhooks: one takes its delivery at the second try, one refuses both (failed), then is deleted.
    receivers.push(await WebhookReceiver.start(), await WebhookReceiver.start());
    receivers[0].answer = (n) => ({ status: n === 1 ? 500 : 200 });
    receivers[1].answer = () => ({ status: 500 });
    const [, refused] = await Promise.all(receivers.map(async ({ url }) => (await arbor.request('POST', '/arbor/v1/webhooks', { body: { url, event_types: ['EnvVarsSet'] } })).json));
    await ok('PUT', '/env_vars', { vars: { A: '1', B: '2' } });
    const recorded = async (type: string) => (await arbor.infra.eventStore.readAll()).some((event) => event.type === type);
    await pollUntil(async () => (await recorded('WebhookDelivered')) && (await recorded('WebhookDeliveryFailed')));
    expect((await arbor.request('DELETE', `/arbor/v1/webhooks/${refused.webhook_id}`)).status).toBe(204);
    await ok('DELETE', '/env_vars/B', undefined, { status: 204 });
    const vm = await arbor.bootVm();
    await ok('PATCH', `/vm/${vm}/label`, { labels: { a: 'b' } });
    await ok('PATCH', `/vm/${vm}/state`, { state: 'Paused' });
    await ok('PATCH', `/vm/${vm}/state`, { state: 'Running' });
    await ok('PATCH', `/vm/${vm}/disk`, { fs_size_mib: 4096 });
    // The operator rotates the SSH key generation and re-keys the VM (not an HTTP operation).
    for (const argv of [['ssh-keys', 'rotate'], ['ssh-keys', 'rekey', '--vm', vm]]) await runAdmin(argv, arbor.infra, { line: () => {} });
    driver.failNext('pause', 'freezer busy');
    await ok('PATCH', `/vm/${vm}/state`, { state: 'Paused' }, { status: 500 });
    await ok('PUT', `/vm/${vm}/files`, { path: '/root/a', content_b64: Buffer.from('x').toString('base64') }, { status: 200 });
    await ok('GET', `/vm/${vm}/files?path=/root/a`);
    await ok('GET', `/vm/${vm}/files?path=/root/none`, undefined, { status: 404 });
    await ok('POST', `/vm/${vm}/exec`, { command: ['echo', 'hi'] }, { status: 200 });
    await ok('POST', `/vm/${vm}/exec`, { command: ['sh', '-c', 'echo far beyond the output cap'] }, { status: 200 });
    const { domain_id } = await ok('POST', '/domains', { vm_id: vm, domain: 'app.catalogue.example.com' });
    await ok('DELETE', `/domains/${domain_id}`, undefined, { status: 200 });
    driver.failNext('exec', 'agent gone');
    await ok('POST', `/vm/${vm}/exec`, { command: ['echo', 'hi'] }, { status: 500 });
    const { commit_id } = await ok('POST', `/vm/${vm}/commit`, { commit_id: randomUUID() }, { headers: { 'x-idempotency-key': randomUUID() } });
    await ok('PATCH', `/commits/${commit_id}`, { is_public: true, name: 'golden' }, { status: 200 });
    await ok('POST', '/commit_tags', { tag_name: 'stable', commit_id });
    await ok('PATCH', '/commit_tags/stable', { description: 'x' }, { status: 204 });
    const second = (await ok('POST', `/vm/${vm}/commit`)).commit_id;
    await ok('PATCH', '/commit_tags/stable', { commit_id: second }, { status: 204 });
    await ok('DELETE', '/commit_tags/stable', undefined, { status: 204 });
    // Two commits of one VM at once under ids of their own: one wins, the other is refused (409)
    // once its id was reserved, and gives it back (CommitIdReleased). Sent again until they meet so.
    const released = async () => (await arbor.infra.eventStore.readAll({ max_count: 100_000 })).some((event) => event.type === 'CommitIdReleased');
    for (let round = 0; round < 20 && !(await released()); round++) {
      const racing = await Promise.all([0, 1].map(() => arbor.request('POST', `/api/v1/vm/${vm}/commit`, { body: { commit_id: randomUUID() } })));
      expect(racing.map((answer) => answer.status).sort()).toEqual(expect.arrayContaining([201]));
    }
    expect(await released()).toBe(true);
    await ok('POST', '/repositories', { name: 'app' });
    await ok('POST', '/repositories/app/tags', { tag_name: 'v1', commit_id });
    await ok('PATCH', '/repositories/app/tags/v1', { commit_id: second, description: 'moved' }, { status: 204 });
    await ok('PATCH', '/repositories/app/visibility', { is_public: true }, { status: 204 });
    const fork = await ok('POST', '/repositories/fork', { source_org: 'default', source_repo: 'app', source_tag: 'v1' }, { key: other.key });
    driver.failNext('commit', 'disk full');
    await ok('POST', '/repositories/fork', { source_org: 'default', source_repo: 'app', source_tag: 'v1', repo_name: 'x' }, { key: other.key, status: 500 });
    const children = (await ok('POST', `/vm/branch/by_vm/${vm}?count=2`)).vms as { vm_id: string }[];
    const fromRef = (await ok('POST', '/vm/from_commit', { ref: 'app:v1' })).vm_id;
    driver.failNext('start', 'out of memory');
    await ok('POST', '/vm/from_commit', { commit_id }, { status: 500 });
    await ok('POST', '/repositories', { name: 'scratch' });
    await ok('DELETE', '/repositories/scratch', undefined, { status: 204 });
    await ok('DELETE', '/repositories/app/tags/v1', undefined, { status: 204 });
    for (const child of [...children.map((c) => c.vm_id), fromRef]) await ok('DELETE', `/vm/${child}`, undefined, { status: 200 });
    await ok('DELETE', `/vm/${fork.vm_id}`, undefined, { key: other.key, status: 200 });
    // Base images: one uploaded, booted, published and deleted; one whose tarball climbs out (failed).
    const upload = async (image_name: string, tar: Buffer) => {
      const form = new FormData();
      form.append('file', new Blob([tar]), 'root.tar');
      const response = await fetch(`${arbor.url}/api/v1/images/upload?image_name=${image_name}`, { method: 'POST', headers: { authorization: `Bearer ${arbor.adminKey}` }, body: form });
      expect(response.status).toBe(201);
      let status: { status: string; base_image_id: string } = { status: 'pending', base_image_id: '' };
      await pollUntil(async () => ['completed', 'failed'].includes((status = await ok('GET', `/images/${image_name}/status`)).status));
      return status;
    };
    const image = await upload('catalogue', await tarOf([{ name: 'etc/hostname', content: 'catalogue\n' }]));
    const imageVm = (await ok('POST', '/vm/new_root?wait_boot=true', { vm_config: { image_name: 'catalogue' } })).vm_id;
    await ok('DELETE', `/vm/${imageVm}`, undefined, { status: 200 });
    expect((await arbor.request('PATCH', `/arbor/v1/images/${image.base_image_id}`, { body: { is_public: true } })).status).toBe(200);
    await ok('DELETE', `/images/images/${image.base_image_id}`, undefined, { status: 200 });
    expect((await upload('climbs-out', await tarOf([{ name: '../x', content: 'x' }]))).status).toBe('failed');
    // An exec whose worker died while it ran (what a killed worker leaves: the request and its
    // start, no end): the worker, started again, records it lost and never runs it.
    const lostVm = await arbor.bootVm();
    await arbor.worker.stop();
    const adminOrg = (await arbor.infra.eventStore.readAll({ max_count: 1000 })).find((event) => event.type === 'OrgCreated')!.metadata.org_id!;
    const lostExec = randomUUID();
    const aggregates = new AggregateRepository(arbor.infra.eventStore, arbor.infra.secrets.events);
    const asWorker = () => newCommandContext({ org_id: adminOrg, actor_key_id: null });
    const request = { type: 'RequestExec' as const, exec_id: lostExec, vm_id: lostVm, org_id: adminOrg, command: ['sleep', '60'], env: null, working_dir: null, stdin: null, timeout_secs: 0 };
    await aggregates.handle(Exec, execKey(adminOrg, lostExec), { ...request, now: new Date().toISOString() }, asWorker());
    await aggregates.handle(Exec, execKey(adminOrg, lostExec), { type: 'RecordExecStarted', now: new Date().toISOString() }, asWorker());
    await arbor.worker.start();
    await pollUntil(() => recorded('ExecLost'));
    await ok('DELETE', `/vm/${lostVm}`, undefined, { status: 200 });
    // A machine that dies: the worker reports it at its next look (a resync every 100 ms here).
    const doomed = await arbor.bootVm();
    driver.lose(doomed);
    await pollUntil(async () => (await arbor.request('GET', `/api/v1/vm/${doomed}/status`)).json.state === 'dead');
    await ok('DELETE', `/vm/${doomed}`, undefined, { status: 200 });
    await ok('DELETE', `/vm/${vm}`, undefined, { status: 200 });
    await ok('DELETE', `/commits/${second}`, undefined, { status: 204 });
    // Deploys (no install or build here: the output cap of 8 bytes would stop them): one with nothing to run (ready); one whose run command stays up past its grace (each
    // in-memory exec takes 3 s here) until its VM is deleted under it; one whose copy into the VM fails.
    const deployed = async (body: Record<string, unknown>, status: string) => {
      const { project_id, vm_id } = await ok('POST', '/deploy', body, { status: 202 });
      await pollUntil(async () => (await arbor.request('GET', `/arbor/v1/projects/${project_id}`)).json.status === status, { timeoutMs: 30_000 });
      await ok('DELETE', `/vm/${vm_id}`, undefined, { status: 200 });
    };
    await deployed({ repo: 'acme/web', name: 'ready' }, 'ready');
    driver.slowDown('exec', 3000);
    await deployed({ repo: 'acme/web', name: 'runs', settings: { run_command: 'serve' } }, 'running');
    driver.slowDown('exec', 0);
    await pollUntil(() => recorded('ProjectRunExited'));
    driver.failNext('exec', 'agent gone');
    await deployed({ repo: 'acme/web', name: 'fails' }, 'failed');
    // People, orgs and keys: a sign-up by mail, a member invited, promoted and removed, a key made, used and revoked.
    const ada = { email: 'ada@example.com', ssh_public_key: newSshPublicKey() };
    expect((await arbor.request('POST', '/api/shell-auth', { key: null, body: ada })).status).toBe(200);
    const link = /(http:\/\/\S+\/arbor\/v1\/shell-auth\/verify\?token=\S+)/.exec((await mail.next(ada.email)).text!)![1];
    expect((await fetch(link, { method: 'POST' })).status).toBe(200);
    expect((await arbor.request('POST', '/api/shell-auth/api-keys', { key: null, body: { ...ada, label: 'catalogue' } })).status).toBe(200);
    // The operator frees her SSH key for another address.
    await runOperatorCommand(['users', 'unbind-key', parseSshPublicKey(ada.ssh_public_key).fingerprint], arbor.infra, () => {});
    const bob = (await arbor.request('POST', '/arbor/v1/org/members', { body: { email: 'bob@example.com', role: 'member' } })).json;
    expect((await arbor.request('PATCH', `/arbor/v1/org/members/${bob.user_id}`, { body: { role: 'admin' } })).status).toBe(200);
    expect((await arbor.request('DELETE', `/arbor/v1/org/members/${bob.user_id}`)).status).toBe(204);
    const spare = (await arbor.request('POST', '/arbor/v1/keys', { body: { label: 'spare key' } })).json;
    expect((await arbor.request('POST', '/api/v1/keys/validate', { key: spare.api_key })).status).toBe(200);
    expect((await arbor.request('DELETE', `/arbor/v1/keys/${spare.api_key_id}`)).status).toBe(204);
    await pollUntil(() => recorded('ApiKeyUsed'));
  }, 120_000);
  afterAll(async () => {
    await mail?.close();
    await git?.stop();
    await Promise.all(receivers.map((receiver) => receiver.close()));
    await arbor?.destroy();
  });

  it("every event of the log, and of the feed, validates against its type's schema; every type was seen", async () => {
    const feed: { type: string; data: unknown; metadata: { schema_version: number } }[] = [];
    for (let after = -1; ; ) {
      const page = (await arbor.request('GET', `/api/v1/events?after=${after}&limit=1000`)).json;
      feed.push(...page.events);
      after = page.next_after;
      if (!page.has_more) break;
    }
    const log = await arbor.infra.eventStore.readAll({ max_count: 100_000 });
    // As written: every event at its type's current version, its data as the schema says.
    expect(catalogueMismatches(log, { upcast: false })).toEqual([]);
    expect(catalogueMismatches(feed, { upcast: false })).toEqual([]);
    const unseen = (events: { type: string }[]) => Object.keys(EVENT_CATALOGUE).filter((type) => !events.some((event) => event.type === type)).sort();
    expect(unseen(log)).toEqual(NOT_PRODUCED);
    expect(unseen(feed)).toEqual([...new Set([...NOT_IN_FEED, ...NOT_PRODUCED])].sort());
  });

  it("checks every suite's log as the harness stops it: an event its type's schema does not allow fails the run", async () => {
    const run = await startTestArbor({ driver: new InMemoryDriver() });
    const metadata = { schema_version: EVENT_CATALOGUE.VmBooted.schema_version, correlation_id: randomUUID(), causation_id: randomUUID(), actor_key_id: null, org_id: null };
    const { position } = await run.infra.eventStore.append(`vm-${randomUUID()}`, [{ id: randomUUID(), type: 'VmBooted', data: { not_a_field: true }, metadata }], 'no_stream');
    await expect(run.destroy()).rejects.toThrow(new RegExp(`^1 event\\(s\\) of this run do not match the event catalogue .*\\nVmBooted at ${position}: `));
  });

  it('shows secrets and their hashes redacted, however old the event', async () => {
    const issued = (await arbor.request('GET', '/api/v1/events?type=ApiKeyIssued&limit=10')).json.events;
    expect(issued.length).toBeGreaterThan(0);
    for (const event of issued) expect(event.data.secret_sha256).toBe('[redacted]');
    const raw = await arbor.infra.eventStore.readAll({ max_count: 10_000 });
    expect(raw.find((e) => e.type === 'ApiKeyIssued')!.data).toMatchObject({ secret_sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
  });

  it('serves the catalogue without a key, and puts every schema in the OpenAPI document', async () => {
    const served = await arbor.request('GET', '/api/v1/events/types', { key: null });
    expect(served.status).toBe(200);
    expect(served.json.types.map((t: { type: string }) => t.type).sort()).toEqual(Object.keys(EVENT_CATALOGUE).sort());
    expect(served.json.types.find((t: { type: string }) => t.type === 'VmBooted')).toEqual({
      type: 'VmBooted',
      aggregate: 'Vm',
      category: 'vm',
      schema_version: 1,
      description: null,
      schema: EVENT_CATALOGUE.VmBooted.schema,
    });
    const doc = (await arbor.request('GET', '/api/docs-json', { key: null })).json;
    expect(doc.openapi).toBe('3.1.0');
    for (const type of Object.keys(EVENT_CATALOGUE)) expect(doc.components.schemas).toHaveProperty(`${type}EventData`);
    expect(Object.keys(doc.paths)).toContain('/api/v1/events/types');
  });
});
