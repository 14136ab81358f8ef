import { randomUUID } from 'node:crypto';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';
import { operationsOf } from '../../trust/support/openapi-operations';
import { missingPathValues, sendOperation, validRequest } from '../../trust/support/operation-request';
import { makeOrgResources } from '../../trust/support/org-resources';

const MIB = 1024 * 1024;

describe('repro', () => {
  let arbor: TestArbor;
  beforeAll(async () => {
    arbor = await startTestArbor({ env: { HYPERVISOR: 'sandbox', ARBOR_WEBHOOK_ALLOW_PRIVATE: 'true' } });
  }, 300_000);
  afterAll(() => arbor?.destroy(), 300_000);

  it('oversize', async () => {
    const document = (await arbor.request('GET', '/api/docs-json', { key: null })).json;
    const resources = await makeOrgResources(arbor.request, { key: arbor.adminKey, orgName: arbor.config.orgName, prefix: 'fuzz', publicRepo: true });
    const results: string[] = [];
    for (let round = 0; round < 3; round++)
    for (const operation of operationsOf(document).filter((o) => o.method !== 'GET')) {
      const base = validRequest(document, operation, resources, operation.method === 'DELETE' ? missingPathValues(operation) : undefined);
      for (const body of [{ raw: `{"pad":"${'x'.repeat(17 * MIB)}"}`, headers: { 'content-type': 'application/json' } }, { raw: 'nope', headers: { 'content-type': 'application/json' } }]) {
        const answer = await sendOperation(arbor.url, operation, { ...base, body }, { key: operation.secured ? arbor.adminKey : null, correlation: randomUUID() });
        results.push(`${answer.status ?? 'ERR ' + answer.failure} ${answer.ms}ms ${operation.id} ${body.raw.length}`);
      }
    }
    console.log(results.filter((r) => r.startsWith('ERR')).join('\n') + `\n${results.length} sent`);
  }, 1800_000);
});
