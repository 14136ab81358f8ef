import { randomUUID } from 'node:crypto';
import type { GitHttpServer } from '../test/support/git-http-server';
import { startTestArbor, type TestArbor } from '../test/support/arbor-harness';
import { issueKeyForNewOrg } from '../test/support/issue-key';
import { printFigures } from './support/figures';
import { type Exchange } from './support/exchange';
import { type OpenApiDocument, type Operation, operationsOf } from './support/openapi-operations';
import { missingPathValues, type OperationRequest, sendOperation, validRequest } from './support/operation-request';
import { makeOrgResources, type OrgResources, pathValueOf, vmsMadeBy } from './support/org-resources';
import { startTrustGitHost } from './support/trust-git-host';
import { BODY_REFERENCES, CLIENT_CHOSEN_IDS } from './walls/body-references';
import { ANY_MEMBERS_WRITES, CHANGES_OF_ONE_RESOURCE, KEY_KINDS, MEMBERSHIP_CHANGES, RIGHTS, type KeyKind } from './walls/rights';

/**
 * The walls between orgs, through every operation of the served OpenAPI document. Org A (home)
 * holds one of every resource, all private; org B (outsider) holds its own. B calls each
 * operation once with A's ids where the path names a resource, and once for each body field that
 * names one, and again with ids nobody has in the same places: the two answers must be the same
 * (status and body, the id itself aside). Ids a client chooses for new things (exec_id, commit_id)
 * are the org's: B choosing A's must be exactly like B choosing a fresh one (both taken). No
 * answer to B may hold any of A's ids or names (but an id B chose itself), and nothing B does may
 * append an event of A's org. Then each kind of key without rights calls every operation, as the
 * table of rights says it must be answered. Sandbox driver.
 */
describe('trust: walls between orgs, and keys without rights', () => {
  let arbor: TestArbor;
  let git: GitHttpServer;
  let document: OpenApiDocument;
  let operations: Operation[];
  let home: OrgResources;
  let outsider: OrgResources;
  let homeOrgId: string;

  beforeAll(async () => {
    git = await startTrustGitHost();
    arbor = await startTestArbor({ env: { HYPERVISOR: 'sandbox', ARBOR_WEBHOOK_ALLOW_PRIVATE: 'true', ARBOR_GIT_BASE_URL: git.url } });
    document = (await arbor.request('GET', '/api/docs-json', { key: null })).json;
    operations = operationsOf(document);
    homeOrgId = (await arbor.infra.eventStore.readAll({ max_count: 1000 })).find((e) => e.type === 'OrgCreated')!.metadata.org_id!;
    home = await makeOrgResources(arbor.request, { key: arbor.adminKey, orgName: arbor.config.orgName, prefix: 'home', publicRepo: false });
    const b = await issueKeyForNewOrg(arbor.infra.eventStore, 'outsider');
    outsider = await makeOrgResources(arbor.request, { key: b.key, orgName: b.org_name, prefix: 'own', publicRepo: true });
  }, 600_000);
  afterAll(async () => {
    await arbor?.destroy();
    await git?.stop();
  }, 300_000);

  /** A's ids and names, as they would show in an answer. */
  const homeSecrets = () => [home.vm, home.exec, home.commit, home.webhook, home.tag, home.repo, home.repoTag, home.envVar, home.project, home.projectVm, home.image, homeOrgId];

  /** An answer with the given values written as <id>, to compare two answers that differ only in the id asked about. */
  const normalised = (answer: Exchange, ...ids: unknown[]) => {
    let text = answer.text;
    for (const id of ids) if (typeof id === 'string' && id) text = text.split(id).join('<id>');
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      // not JSON: compare the text
    }
    return { status: answer.status, body };
  };

  it("answers another org's ids exactly like ids nobody has, and never shows them", async () => {
    const failures: string[] = [];
    let compared = 0;
    let vmsDeleted = 0;
    // A's exec and commit under ids A chose, fresh for each request of B's that chooses one.
    const chosenByA = new Map<string, string>();
    for (const operation of operations) {
      for (const [field, make] of Object.entries(CLIENT_CHOSEN_IDS)) {
        if (operation.body?.name === field.split('.')[0]) chosenByA.set(`${operation.id} ${field}`, await make(home, arbor.request));
      }
    }
    const before = await arbor.infra.eventStore.headPosition();

    /** `chosen`: ids B chose in this request, its own names from then on (an answer may echo them). */
    const send = async (operation: Operation, request: OperationRequest, chosen: unknown[]) => {
      const answer = await sendOperation(arbor.url, operation, request, { key: outsider.key, correlation: randomUUID() });
      const leaked = homeSecrets().filter((secret) => !chosen.includes(secret) && answer.text.includes(secret));
      if (leaked.length > 0) failures.push(`${operation.id}: the answer shows org A's ${leaked.join(', ')}: ${answer.text.slice(0, 200)}`);
      if (answer.status !== null && answer.status < 300) {
        for (const vm of vmsMadeBy(answer.json)) {
          if (vm === outsider.vm) continue;
          await arbor.request('DELETE', `/api/v1/vm/${vm}`, { key: outsider.key });
          vmsDeleted++;
        }
      }
      return answer;
    };
    const compare = async (operation: Operation, where: string, foreign: OperationRequest, missing: OperationRequest, ids: unknown[], chosen = false) => {
      const asForeign = normalised(await send(operation, foreign, chosen ? ids : []), ...ids);
      const asMissing = normalised(await send(operation, missing, chosen ? ids : []), ...ids);
      compared++;
      const taken = (status: number | null) => status !== null && status < 300;
      if (chosen && !(taken(asForeign.status) && taken(asMissing.status))) {
        failures.push(`${operation.id} (${where}): a chosen id must be free, yet org A's answers ${asForeign.status}, a fresh one ${asMissing.status}`);
      }
      if (JSON.stringify(asForeign) !== JSON.stringify(asMissing)) {
        failures.push(`${operation.id} (${where}): org A's answers ${JSON.stringify(asForeign).slice(0, 240)}, nobody's ${JSON.stringify(asMissing).slice(0, 240)}`);
      }
    };

    /** B's own valid request with A's value in each body field of `fields` the operation has, against a value nobody has. */
    const compareBodies = async (operation: Operation, fields: Record<string, unknown>, chosen: boolean) => {
      for (const field of Object.keys(fields)) {
        const [schema, property] = field.split('.');
        if (operation.body?.name !== schema) continue;
        const { foreign: foreignValue, missing: missingValue } = chosen ? { foreign: chosenByA.get(`${operation.id} ${field}`)!, missing: randomUUID() } : BODY_REFERENCES[field](home);
        const base = validRequest(document, operation, outsider);
        const withValue = (value: unknown): OperationRequest => ({ ...base, body: { json: { ...(base.body as { json: object }).json, [property]: value } } });
        await compare(operation, `body ${property}`, withValue(foreignValue), withValue(missingValue), [foreignValue, missingValue], chosen);
      }
    };

    for (const operation of operations) {
      // B's own valid request, with A's resources in the whole path…
      const pathParameters = operation.parameters.filter((p) => p.in === 'path');
      if (pathParameters.length > 0) {
        const foreign = validRequest(document, operation, outsider, Object.fromEntries(pathParameters.map((p) => [p.name, pathValueOf(home, operation, p.name)])));
        const missingValues = missingPathValues(operation);
        // An org's name is public (its public repositories show it): A's org with nobody's repository.
        if ('org_name' in missingValues) missingValues.org_name = home.orgName;
        const missing = { ...foreign, pathValues: missingValues };
        await compare(operation, 'path', foreign, missing, [...Object.values(foreign.pathValues), ...Object.values(missingValues)]);
      }
      // …and with A's resource in each body field that names one.
      await compareBodies(operation, BODY_REFERENCES, false);
    }
    // Last, A's ids where B chooses one (once B holds A's id as its own name, answers may show it).
    for (const operation of operations) await compareBodies(operation, CLIENT_CHOSEN_IDS, true);

    const homeEvents = (await arbor.infra.eventStore.readAll({ after_position: before, max_count: 100_000 })).filter((e) => e.metadata.org_id === homeOrgId);
    for (const event of homeEvents) failures.push(`org B's requests appended ${event.type} to org A's ${event.stream_id}`);
    printFigures('walls', { operations: operations.length, 'comparisons (org A’s ids against nobody’s)': compared, 'differing answers or leaks': failures.length, "events in org A's streams": homeEvents.length, 'VMs made and deleted': vmsDeleted });
    expect(failures).toEqual([]);
  }, 60 * 60_000);

  it("lets another org choose A's exec_id and commit_id as its own, and A's exec and commit stay A's", async () => {
    const exec_id = randomUUID();
    const commit_id = randomUUID();
    const homeCall = (method: string, path: string, body?: unknown) => arbor.request(method, path, { key: home.key, body });
    const outsiderCall = (method: string, path: string, body?: unknown) => arbor.request(method, path, { key: outsider.key, body });
    expect((await homeCall('POST', `/api/v1/vm/${home.vm}/exec`, { command: ['echo', 'home secret'], exec_id })).json).toMatchObject({ stdout: 'home secret\n', exec_id });
    expect((await homeCall('POST', `/api/v1/vm/${home.vm}/commit`, { commit_id, name: 'home chosen' })).json).toEqual({ commit_id });
    const before = await arbor.infra.eventStore.headPosition();

    const theirExec = await outsiderCall('POST', `/api/v1/vm/${outsider.vm}/exec`, { command: ['echo', 'outsider'], exec_id });
    expect({ status: theirExec.status, body: theirExec.json }).toEqual({ status: 200, body: { exit_code: 0, stdout: 'outsider\n', stderr: '', exec_id } });
    const theirCommit = await outsiderCall('POST', `/api/v1/vm/${outsider.vm}/commit`, { commit_id, name: 'outsider chosen' });
    expect({ status: theirCommit.status, body: theirCommit.json }).toEqual({ status: 201, body: { commit_id } });

    // Each org reads its own under the one id; B's requests appended nothing of A's org.
    const attached = async (call: typeof homeCall, vm: string) => (await call('POST', `/api/v1/vm/${vm}/exec/stream/attach`, { exec_id, cursor: 0 })).text;
    expect(await attached(homeCall, home.vm)).toContain(Buffer.from('home secret\n').toString('base64'));
    expect(await attached(outsiderCall, outsider.vm)).not.toContain(Buffer.from('home secret\n').toString('base64'));
    expect((await homeCall('GET', `/api/v1/vm/commits/${commit_id}/parents`)).json[0]).toMatchObject({ id: commit_id, name: 'home chosen', parent_vm_id: home.vm });
    expect((await outsiderCall('GET', `/api/v1/vm/commits/${commit_id}/parents`)).json[0]).toMatchObject({ id: commit_id, name: 'outsider chosen', parent_vm_id: outsider.vm });
    const homeEvents = (await arbor.infra.eventStore.readAll({ after_position: before, max_count: 100_000 })).filter((e) => e.metadata.org_id === homeOrgId);
    expect(homeEvents.map((e) => `${e.type} on ${e.stream_id}`)).toEqual([]);
  }, 10 * 60_000);

  it('answers each kind of key without rights as the table of rights says, and logs nothing for it', async () => {
    const failures: string[] = [];
    let checked = 0;
    // Every write of the document has its place in the table: a member's 403, or any member's to make.
    const placed = [...CHANGES_OF_ONE_RESOURCE, ...MEMBERSHIP_CHANGES, ...ANY_MEMBERS_WRITES];
    for (const id of placed) if (!operations.some((operation) => operation.id === id)) failures.push(`the table of rights names ${id}, which the document does not have`);
    for (const operation of operations.filter((o) => o.secured && o.method !== 'GET' && !placed.includes(o.id))) {
      failures.push(`${operation.id}: a write the table of rights does not place (a member's 403, or any member's to make)`);
    }
    const keys = Object.fromEntries(await Promise.all(Object.entries(KEY_KINDS).map(async ([kind, make]) => [kind, await make({ arbor, home, homeOrgId })]))) as Record<KeyKind, string | null>;
    for (const row of RIGHTS) {
      for (const operation of operations.filter(row.operations)) {
        const correlation = randomUUID();
        const before = await arbor.infra.eventStore.headPosition();
        const request = validRequest(document, operation, home, row.on === 'home' ? undefined : missingPathValues(operation));
        if (row.body && request.body && 'json' in request.body) request.body = { json: { ...(request.body.json as object), ...row.body } };
        const answer = await sendOperation(arbor.url, operation, request, { key: keys[row.key], correlation });
        checked++;
        const got = { status: answer.status, body: answer.json };
        if (!row.expect(got)) failures.push(`${operation.id} with ${row.key}: ${JSON.stringify(got).slice(0, 200)} (${row.says})`);
        const caused = (await arbor.infra.eventStore.readAll({ after_position: before, max_count: 10_000 })).filter((e) => e.metadata.correlation_id === correlation);
        if (answer.status !== null && answer.status >= 400 && caused.length > 0) failures.push(`${operation.id} with ${row.key}: refused, yet logged ${caused.map((e) => e.type).join(', ')}`);
      }
    }
    printFigures('walls (rights)', { 'key kinds': Object.keys(KEY_KINDS).length, rows: RIGHTS.length, 'requests checked': checked, failures: failures.length });
    expect(failures).toEqual([]);
  }, 30 * 60_000);
});
