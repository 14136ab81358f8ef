import { deciderSpec } from '../testing/decider-spec';
import { orgDecider } from './org.decider';

const now = '2026-11-23T10:00:00.000Z';
const spec = deciderSpec(orgDecider);

describe('org decider', () => {
  it('creates an org once', () => {
    const created = { type: 'OrgCreated' as const, data: { org_id: 'org-1', name: 'acme', created_at: now } };
    spec.given([]).when({ type: 'CreateOrg', org_id: 'org-1', name: 'acme', now }).then([created]);
    spec.given([created]).when({ type: 'CreateOrg', org_id: 'org-1', name: 'acme', now }).thenThrows('conflict', 'org org-1 already exists');
  });
});
