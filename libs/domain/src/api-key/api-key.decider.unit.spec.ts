import { deciderSpec } from '../testing/decider-spec';
import { apiKeyDecider } from './api-key.decider';
import type { ApiKeyEvent } from './api-key.events';

const now = '2026-11-23T10:00:00.000Z';
const spec = deciderSpec(apiKeyDecider);
const key = { key_id: 'key-1', org_id: 'org-1', label: 'ci', secret_sha256: 'ab'.repeat(32), is_operator: false };
const issued: ApiKeyEvent = { type: 'ApiKeyIssued', data: { ...key, issued_at: now } };

describe('api key decider', () => {
  it('issues a key once, keeping only the hash of its secret', () => {
    spec.given([]).when({ type: 'IssueApiKey', ...key, now }).then([issued]);
    spec.given([issued]).when({ type: 'IssueApiKey', ...key, now }).thenThrows('conflict', 'api key key-1 already exists');
  });

  it('a revoked key stays revoked', () => {
    const revoked: ApiKeyEvent = { type: 'ApiKeyRevoked', data: { key_id: 'key-1', revoked_at: now } };
    expect([issued, revoked].reduce(apiKeyDecider.evolve, apiKeyDecider.initialState())).toEqual({ status: 'revoked', key });
    spec.given([issued, revoked]).when({ type: 'IssueApiKey', ...key, now }).thenThrows('conflict');
  });
});
