import { deciderSpec } from '../testing/decider-spec';
import { idempotentResponseDecider } from './idempotent-response.decider';

const spec = deciderSpec(idempotentResponseDecider);
const response = { method: 'POST', path: '/api/v1/vm/new_root', status: 201, body: { vm_id: 'vm-1' } };

describe('idempotent response decider', () => {
  it('records the first response; a later one changes nothing', () => {
    const recorded = { type: 'IdempotentResponseRecorded' as const, data: response };
    spec.given([]).when({ type: 'RecordIdempotentResponse', ...response }).then([recorded]);
    spec.given([recorded]).when({ type: 'RecordIdempotentResponse', ...response, status: 500 }).then([]);
  });
});
