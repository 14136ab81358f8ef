import { commitDeployedApp, DEPLOYED_SETTINGS as SETTINGS, GUEST_HTTP_CLIENT as CLIENT } from '../support/deploy-app';
import { GitHttpServer } from '../support/git-http-server';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';
import { issueKeyForMember, issueKeyForNewOrg, type IssuedTestKey } from '../support/issue-key';
import { pollUntil } from '../support/poll-until';
import { describeUnless, rootReason } from '../support/skip-unless';

/** The git host wants these (Basic); Arbor has them from ARBOR_GIT_USERNAME/ARBOR_GIT_TOKEN. */
const CREDENTIALS = { username: 'arbor-deployer', token: 'ghp_Deploy-Token-0123456789' };

/**
 * Deploy over HTTP on the sandbox driver, from a private git repository the test serves (git
 * http-backend, credentials required): the project's VM gets the clone, runs the install and build
 * as execs (their output in the VM's logs), starts the server detached, and the server answers
 * inside the VM.
 */
describeUnless(rootReason)('deploy (HTTP, sandbox driver): a repository of the git host into a VM of its own', () => {
  let arbor: TestArbor;
  let host: GitHttpServer;
  let alice: IssuedTestKey;
  let bob: IssuedTestKey;
  let main: string;

  const deploy = (key: string, body: Record<string, unknown>) => arbor.request('POST', '/api/v1/deploy', { key, body });
  const project = (key: string, id: string) => arbor.request('GET', `/arbor/v1/projects/${id}`, { key });
  const settled = async (key: string, id: string) => {
    let answer = await project(key, id);
    await pollUntil(async () => !['cloning', 'installing', 'building', 'starting'].includes((answer = await project(key, id)).json.status), { timeoutMs: 120_000, intervalMs: 200 });
    return answer.json;
  };
  /** Every chunk of the VM's exec logs, decoded, by exec. */
  const logs = async (key: string, vm: string) => {
    const entries: { exec_id: string; stream: string; data_b64: string }[] = (await arbor.request('GET', `/api/v1/vm/${vm}/logs?max_entries=1000`, { key })).json.entries;
    const byExec: Record<string, string> = {};
    for (const entry of entries) byExec[entry.exec_id] = (byExec[entry.exec_id] ?? '') + Buffer.from(entry.data_b64, 'base64').toString();
    return byExec;
  };
  const vmCount = async (key: string) => (await arbor.request('GET', '/api/v1/vms', { key })).json.length;

  beforeAll(async () => {
    host = await GitHttpServer.start({ credentials: CREDENTIALS });
    main = commitDeployedApp(host, 'acme/web', 'main');
    commitDeployedApp(host, 'acme/web', 'broken', { brokenBuild: true });
    arbor = await startTestArbor({ env: { HYPERVISOR: 'sandbox', ARBOR_GIT_BASE_URL: host.url, ARBOR_GIT_USERNAME: CREDENTIALS.username, ARBOR_GIT_TOKEN: CREDENTIALS.token, ARBOR_DEPLOY_START_SECS: '1', ARBOR_EXEC_OUTPUT_MAX_BYTES: String(64 * 1024) } });
    alice = await issueKeyForNewOrg(arbor.infra.eventStore, 'alice');
    bob = await issueKeyForNewOrg(arbor.infra.eventStore, 'bob');
  }, 600_000);
  afterAll(async () => {
    await arbor?.destroy();
    await host?.stop();
  });

  it('202 at once with the project and its VM; the VM boots, the steps run as execs, and the server answers inside the VM', async () => {
    const accepted = await deploy(alice.key, { repo: 'acme/web', settings: SETTINGS });
    expect(accepted.status).toBe(202);
    expect(accepted.json).toEqual({ project_id: expect.any(String), vm_id: expect.any(String), status: 'cloning' });
    const { project_id, vm_id } = accepted.json;
    // The CLI makes the VM its HEAD and polls its status at once: it is there from the answer on.
    expect(['booting', 'running']).toContain((await arbor.request('GET', `/api/v1/vm/${vm_id}/status`, { key: alice.key })).json.state);

    const running = await settled(alice.key, project_id);
    expect(running).toMatchObject({ project_id, name: 'web', repo: 'acme/web', branch: 'main', commit_sha: main, vm_id, status: 'running', reason: null, directory: '/root/web', working_dir: '/root/web/app' });
    expect(running.steps.map((s: { step: string }) => s.step)).toEqual(['install', 'build', 'run']);
    expect((await arbor.request('GET', `/api/v1/vm/${vm_id}/status`, { key: alice.key })).json.state).toBe('running');

    const answered = await arbor.request('POST', `/api/v1/vm/${vm_id}/exec`, { key: alice.key, body: { command: ['perl', '-e', CLIENT, '8080'] } });
    expect(answered.json).toMatchObject({ exit_code: 0, stdout: expect.stringMatching(/^HTTP\/1.0 200 OK\r\n[\s\S]*\r\n\r\nbuilt from deps\n$/) });

    // Each step's output is in the VM's exec logs, under its exec; the server's too, as it runs.
    const [install, build, run] = running.steps.map((s: { exec_id: string }) => s.exec_id);
    await pollUntil(async () => ((await logs(alice.key, vm_id))[run] ?? '').includes('answered a request'));
    const byExec = await logs(alice.key, vm_id);
    expect([byExec[install], byExec[build], byExec[run]]).toEqual(['installing dependencies\n', 'building\n', 'listening on 8080\nanswered a request\n']);
    // The clone is the branch's head, with its history cut to that commit.
    const head = await arbor.request('POST', `/api/v1/vm/${vm_id}/exec`, { key: alice.key, body: { command: ['cat', '/root/web/.git/shallow', '/root/web/README.md'] } });
    expect(head.json.stdout).toBe(`${main}\na web app\n`);

    // A member of the org reads the project, and may not delete what the deploy made for its owner (the role rule).
    const member = await issueKeyForMember(arbor.infra.eventStore, alice.org_id, 'member');
    expect((await project(member.key, project_id)).json.status).toBe('running');
    expect((await arbor.request('DELETE', `/api/v1/vm/${vm_id}`, { key: member.key })).status).toBe(403);
    // Another org sees neither the project nor its VM.
    expect((await project(bob.key, project_id)).status).toBe(404);
    expect((await arbor.request('GET', '/arbor/v1/projects', { key: bob.key })).json).toEqual({ projects: [] });
    expect((await arbor.request('GET', `/api/v1/vm/${vm_id}/status`, { key: bob.key })).status).toBe(404);
    expect((await arbor.request('GET', '/arbor/v1/projects', { key: alice.key })).json.projects.map((p: { project_id: string }) => p.project_id)).toContain(project_id);
  });

  it('a failing build fails the project with the reason; its output is in the logs, and the VM stays to be looked into', async () => {
    const accepted = await deploy(alice.key, { repo: 'acme/web', name: 'broken-web', branch: 'broken', settings: SETTINGS });
    expect(accepted.status).toBe(202);
    const failed = await settled(alice.key, accepted.json.project_id);
    expect(failed).toMatchObject({ status: 'failed', reason: 'the build command exited with code 2', branch: 'broken' });
    expect(failed.steps.map((s: { step: string }) => s.step)).toEqual(['install', 'build']);
    expect((await logs(alice.key, accepted.json.vm_id))[failed.steps[1].exec_id]).toBe('compile error: missing semicolon at line 3\n');
    expect((await arbor.request('GET', `/api/v1/vm/${accepted.json.vm_id}/status`, { key: alice.key })).json.state).toBe('running');
    expect((await arbor.request('DELETE', `/api/v1/vm/${accepted.json.vm_id}`, { key: alice.key })).status).toBe(200);
    expect((await project(alice.key, accepted.json.project_id)).json).toMatchObject({ status: 'deleted', reason: 'its VM was deleted' });
  });

  it("the run command's end ends the project: failed when it exits in its first seconds, and when it exits later with its code", async () => {
    const early = await deploy(alice.key, { repo: 'acme/web', name: 'early', settings: { run_command: 'echo "bad config" >&2; exit 3' } });
    const late = await deploy(alice.key, { repo: 'acme/web', name: 'late', settings: { run_command: 'echo "up"; sleep 2; echo "crashed" >&2; exit 7' } });
    expect([early.status, late.status]).toEqual([202, 202]);
    const failedEarly = await settled(alice.key, early.json.project_id);
    expect(failedEarly).toMatchObject({ status: 'failed', reason: 'the run command exited with code 3 within its first 1 s' });
    expect((await logs(alice.key, early.json.vm_id))[failedEarly.steps[0].exec_id]).toBe('bad config\n');
    expect(await settled(alice.key, late.json.project_id)).toMatchObject({ status: 'running' });
    await pollUntil(async () => (await project(alice.key, late.json.project_id)).json.status !== 'running', { timeoutMs: 60_000, intervalMs: 200 });
    const failedLate = (await project(alice.key, late.json.project_id)).json;
    expect(failedLate).toMatchObject({ status: 'failed', reason: 'the run command exited with code 7' });
    expect((await logs(alice.key, late.json.vm_id))[failedLate.steps[0].exec_id]).toBe('up\ncrashed\n');
    for (const vm of [early.json.vm_id, late.json.vm_id]) expect((await arbor.request('DELETE', `/api/v1/vm/${vm}`, { key: alice.key })).status).toBe(200);
  });

  it("a run command whose output passes the exec cap runs on, followed quietly to its end", async () => {
    const chatty = 'i=0; while [ $i -lt 2000 ]; do echo "line $i of a chatty app, long enough to pass the cap soon"; i=$((i+1)); done; sleep 3; exit 5';
    const accepted = await deploy(alice.key, { repo: 'acme/web', name: 'chatty', settings: { run_command: chatty } });
    expect(await settled(alice.key, accepted.json.project_id)).toMatchObject({ status: 'running' });
    await pollUntil(async () => (await project(alice.key, accepted.json.project_id)).json.status !== 'running', { timeoutMs: 60_000, intervalMs: 200 });
    expect((await project(alice.key, accepted.json.project_id)).json).toMatchObject({ status: 'failed', reason: 'the run command exited with code 5' });
    const output = Object.values(await logs(alice.key, accepted.json.vm_id)).join('');
    expect(output).toContain('arbor: output limit of 65536 bytes reached');
    expect(output).toContain(`arbor: the run command's output passed the exec output cap: it goes on in /var/log/arbor-deploy/${accepted.json.project_id}.log only`);
    expect((await arbor.request('DELETE', `/api/v1/vm/${accepted.json.vm_id}`, { key: alice.key })).status).toBe(200);
  });

  it('refuses before anything is made: 404 for a missing repository or branch, 400 for bad input, 422 for a body of the wrong shape', async () => {
    const before = await vmCount(alice.key);
    expect(await deploy(alice.key, { repo: 'acme/nope' }).then((a) => [a.status, a.json])).toEqual([404, { error: `repository acme/nope not found on ${host.url}`, success: false }]);
    expect(await deploy(alice.key, { repo: 'acme/web', name: 'other', branch: 'nope' }).then((a) => [a.status, a.json])).toEqual([404, { error: 'branch nope of repository acme/web not found', success: false }]);
    expect((await deploy(alice.key, { repo: 'acme' })).status).toBe(400);
    expect((await deploy(alice.key, { repo: 'acme/web', branch: 'a..b' })).status).toBe(400);
    expect((await deploy(alice.key, { repo: 'acme/web', name: 'no spaces' })).status).toBe(400);
    expect((await deploy(alice.key, { repo: 'acme/web', settings: { working_directory: '../etc' } })).json.error).toBe('settings.working_directory must stay inside the repository (no "..")');
    expect(await deploy(alice.key, { settings: {} }).then((a) => [a.status, a.json.error])).toEqual([422, expect.stringContaining('missing field `repo`')]);
    expect((await deploy(alice.key, { repo: 'acme/web', settings: { run_command: 5 } })).status).toBe(422);
    expect(await vmCount(alice.key)).toBe(before);
  });

  it("a name is the org's while its project's VM exists: 409 for another deploy under it, free in other orgs, free again once the VM is deleted", async () => {
    const first = await deploy(alice.key, { repo: 'acme/web', name: 'shop', settings: { install_command: 'true' } });
    expect(first.status).toBe(202);
    expect(await settled(alice.key, first.json.project_id)).toMatchObject({ status: 'ready', name: 'shop' });
    const before = await vmCount(alice.key);
    expect(await deploy(alice.key, { repo: 'acme/web', name: 'shop' }).then((a) => [a.status, a.json])).toEqual([409, { error: "project 'shop' already exists", success: false }]);
    expect(await vmCount(alice.key)).toBe(before);
    const elsewhere = await deploy(bob.key, { repo: 'acme/web', name: 'shop' });
    expect(elsewhere.status).toBe(202);
    expect(await settled(bob.key, elsewhere.json.project_id)).toMatchObject({ status: 'ready', name: 'shop' });

    expect((await arbor.request('DELETE', `/api/v1/vm/${first.json.vm_id}`, { key: alice.key })).status).toBe(200);
    const again = await deploy(alice.key, { repo: 'acme/web', name: 'shop' });
    expect(again.status).toBe(202);
    expect(again.json.project_id).not.toBe(first.json.project_id);
    for (const [key, vm] of [[alice.key, again.json.vm_id], [bob.key, elsewhere.json.vm_id]]) expect((await arbor.request('DELETE', `/api/v1/vm/${vm}`, { key })).status).toBe(200);
  });

  it("the git host's credentials were used, and are nowhere in the log", async () => {
    expect(host.requests.length).toBeGreaterThan(0);
    expect(host.requests.every((r) => r.authorization === `Basic ${Buffer.from(`${CREDENTIALS.username}:${CREDENTIALS.token}`).toString('base64')}`)).toBe(true);
    const log = (await arbor.request('GET', '/api/v1/events/export')).text;
    expect(log).toContain('ProjectRequested');
    for (const secret of [CREDENTIALS.token, Buffer.from(`${CREDENTIALS.username}:${CREDENTIALS.token}`).toString('base64')]) expect(log).not.toContain(secret);
  });
});
