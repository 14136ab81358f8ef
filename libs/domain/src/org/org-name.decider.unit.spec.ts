import { deciderSpec } from '../testing/decider-spec';
import { orgNameDecider } from './org-name.decider';

const now = '2026-11-24T10:00:00.000Z';
const spec = deciderSpec(orgNameDecider);

describe('org name decider: names are unique across the installation', () => {
  it('the first org to reserve a name holds it', () => {
    const reserved = { type: 'OrgNameReserved' as const, data: { name: 'acme', org_id: 'org-1', reserved_at: now } };
    spec.given([]).when({ type: 'ReserveOrgName', name: 'acme', org_id: 'org-1', now }).then([reserved]);
    spec.given([reserved]).when({ type: 'ReserveOrgName', name: 'acme', org_id: 'org-1', now }).then([]);
    spec.given([reserved]).when({ type: 'ReserveOrgName', name: 'acme', org_id: 'org-2', now }).thenThrows('conflict', "org name 'acme' is taken");
    spec.given([]).when({ type: 'ReserveOrgName', name: 'a/b', org_id: 'org-1', now }).thenThrows('invalid');
  });
});
