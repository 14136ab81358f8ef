import { deciderSpec } from '../testing/decider-spec';
import { systemBootstrapDecider } from './system-bootstrap.decider';

const now = '2026-11-23T10:00:00.000Z';
const spec = deciderSpec(systemBootstrapDecider);

describe('system bootstrap decider: exactly one first start', () => {
  it('the first start wins; any other is told it is done', () => {
    const bootstrapped = { type: 'SystemBootstrapped' as const, data: { org_id: 'org-1', key_id: 'key-1', at: now } };
    spec.given([]).when({ type: 'BootstrapSystem', org_id: 'org-1', key_id: 'key-1', now }).then([bootstrapped]);
    spec.given([bootstrapped]).when({ type: 'BootstrapSystem', org_id: 'org-2', key_id: 'key-2', now }).thenThrows('conflict', 'the system is bootstrapped already');
  });
});
