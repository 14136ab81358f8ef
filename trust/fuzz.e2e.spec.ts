import { randomUUID } from 'node:crypto';
import type { GitHttpServer } from '../test/support/git-http-server';
import { startTestArbor, type TestArbor } from '../test/support/arbor-harness';
import { mutationsOf, sampleByKind } from './fuzz/fuzz-requests';
import { printFigures } from './support/figures';
import { type OpenApiDocument, operationsOf } from './support/openapi-operations';
import { missingPathValues, sendOperation, validRequest } from './support/operation-request';
import { makeOrgResources, vmsMadeBy } from './support/org-resources';
import { seededRandom } from './support/seeded-random';
import { startTrustGitHost } from './support/trust-git-host';
import { seedFor, trustSetting } from './support/trust-settings';

/** Odd strings tried in each string field, path and query parameter: this many of the named ones, and random ones. */
const NAMED_STRINGS = trustSetting('FUZZ_NAMED_STRINGS', { short: 3, full: 1000 });
const RANDOM_STRINGS = trustSetting('FUZZ_RANDOM_STRINGS', { short: 1, full: 6 });
/** Mutations sent per operation: the short form takes this many, one kind after another (0: every one). */
const PER_OPERATION = trustSetting('FUZZ_PER_OPERATION', { short: 6, full: 0 });
/** TRUST_VERBOSE=1 prints every request as it is answered; TRUST_FUZZ_ONLY=<regex> fuzzes only the operations it matches ("POST /api/v1/vm/{vm_id}/exec"). */
const VERBOSE = process.env.TRUST_VERBOSE === '1';
const ONLY = new RegExp(process.env.TRUST_FUZZ_ONLY ?? '');

/**
 * Requests generated from the OpenAPI document the api serves, for every operation: each starts
 * from a valid request (real resources in its path, a body sampled from its schema) and changes one
 * thing — a wrong type, a missing field, an odd or huge string, a bad UUID, deep nesting, another
 * content type, an oversize body. None may answer 5xx or go unanswered, and a request refused
 * (4xx) must leave no event in the log: every request carries its own X-Correlation-Id, which
 * every event it causes carries too. Sandbox driver, so what is accepted really runs.
 */
describe('trust: fuzz every operation of the served OpenAPI document', () => {
  let arbor: TestArbor;
  let git: GitHttpServer;
  let document: OpenApiDocument;

  beforeAll(async () => {
    git = await startTrustGitHost();
    arbor = await startTestArbor({ env: { HYPERVISOR: 'sandbox', ARBOR_WEBHOOK_ALLOW_PRIVATE: 'true', ARBOR_GIT_BASE_URL: git.url } });
    document = (await arbor.request('GET', '/api/docs-json', { key: null })).json;
  }, 300_000);
  afterAll(async () => {
    await arbor?.destroy();
    await git?.stop();
  }, 300_000);

  it('answers every generated request with no 5xx, and logs nothing for the ones it refuses', async () => {
    const operations = operationsOf(document).filter((operation) => ONLY.test(operation.id));
    expect(operations.length).toBeGreaterThan(process.env.TRUST_FUZZ_ONLY ? 0 : 50);
    const resources = await makeOrgResources(arbor.request, { key: arbor.adminKey, orgName: arbor.config.orgName, prefix: 'fuzz', publicRepo: true });

    const byStatus: Record<string, number> = { '5xx': 0, unanswered: 0 };
    const byKind: Record<string, number> = {};
    const findings: string[] = [];
    let requests = 0;
    let refusedYetLogged = 0;
    let vmsDeleted = 0;
    const started = Date.now();

    for (const operation of operations) {
      await keepRunning(resources.vm);
      // A deletion's valid request names nothing that exists: what a mutation leaves valid must not
      // delete the resources the other operations name.
      const base = validRequest(document, operation, resources, operation.method === 'DELETE' ? missingPathValues(operation) : undefined);
      const generated = mutationsOf(document, operation, base, { namedStrings: NAMED_STRINGS, randomStrings: RANDOM_STRINGS });
      const mutations = [{ kind: 'valid', label: 'the valid request', request: base }, ...sampleByKind(generated, PER_OPERATION, seededRandom(seedFor('fuzz sample', operation.id)))];
      for (const mutation of mutations) {
        const correlation = randomUUID();
        const before = await arbor.infra.eventStore.headPosition();
        const answer = await sendOperation(arbor.url, operation, mutation.request, { key: operation.secured ? arbor.adminKey : null, correlation });
        requests++;
        byKind[mutation.kind] = (byKind[mutation.kind] ?? 0) + 1;
        const statusClass = answer.status === null ? 'unanswered' : `${Math.floor(answer.status / 100)}xx`;
        byStatus[statusClass] = (byStatus[statusClass] ?? 0) + 1;
        if (VERBOSE) process.stdout.write(`${answer.status} ${answer.ms} ms ${operation.id} ${mutation.kind}: ${mutation.label.slice(0, 120)}\n`);
        const finding = (problem: string) => findings.push(`${operation.id} — ${mutation.kind}: ${mutation.label.slice(0, 200)} → ${problem.slice(0, 300)}`);
        if (answer.status === null) finding(`no answer: ${answer.failure}`);
        else if (answer.status >= 500) finding(`${answer.status} ${answer.text}`);
        else if (answer.status >= 400) {
          const caused = (await arbor.infra.eventStore.readAll({ after_position: before, max_count: 10_000 })).filter((e) => e.metadata.correlation_id === correlation);
          if (caused.length > 0) {
            refusedYetLogged++;
            finding(`${answer.status} ${answer.text}, yet it logged ${caused.map((e) => e.type).join(', ')}`);
          }
        } else {
          for (const vm of vmsMadeBy(answer.json)) {
            if (vm === resources.vm) continue;
            await arbor.request('DELETE', `/api/v1/vm/${vm}`);
            vmsDeleted++;
          }
        }
      }
    }

    printFigures('fuzz', {
      operations: operations.length,
      requests,
      ...Object.fromEntries(Object.entries(byStatus).sort()),
      'refused yet logged': refusedYetLogged,
      ...Object.fromEntries(Object.entries(byKind).map(([kind, count]) => [`[${kind}]`, count])),
      'VMs made and deleted': vmsDeleted,
      seconds: Math.round((Date.now() - started) / 1000),
    });
    expect(findings).toEqual([]);
  }, 3 * 60 * 60_000);

  /** Keeps the VM every operation names running: a mutation the API accepted may have paused it. */
  async function keepRunning(vm: string): Promise<void> {
    const status = await arbor.request('GET', `/api/v1/vm/${vm}/status`);
    if (status.json?.state === 'paused') await arbor.request('PATCH', `/api/v1/vm/${vm}/state`, { body: { state: 'Running' } });
  }
});
