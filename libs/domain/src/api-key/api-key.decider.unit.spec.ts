import { deciderSpec } from '../testing/decider-spec';
import { apiKeyUsageDecider } from './api-key-usage.decider';
import { apiKeyDecider } from './api-key.decider';
import type { ApiKeyEvent } from './api-key.events';

const now = '2026-11-23T10:00:00.000Z';
const spec = deciderSpec(apiKeyDecider);
const key = { key_id: 'key-1', org_id: 'org-1', user_id: 'user-1', label: 'ci', secret_sha256: 'ab'.repeat(32), is_operator: false };
const issued: ApiKeyEvent = { type: 'ApiKeyIssued', data: { ...key, issued_at: now } };
const revoked: ApiKeyEvent = { type: 'ApiKeyRevoked', data: { key_id: 'key-1', revoked_at: now } };

describe('api key decider', () => {
  it('issues a key once, keeping only the hash of its secret', () => {
    spec.given([]).when({ type: 'IssueApiKey', ...key, now }).then([issued]);
    spec.given([issued]).when({ type: 'IssueApiKey', ...key, now }).thenThrows('conflict', 'api key key-1 already exists');
  });

  it('revokes a key once; a revoked key stays revoked', () => {
    spec.given([issued]).when({ type: 'RevokeApiKey', now }).then([revoked]);
    spec.given([issued, revoked]).when({ type: 'RevokeApiKey', now }).then([]);
    spec.given([]).when({ type: 'RevokeApiKey', now }).thenThrows('not_found', 'api key not found');
    expect([issued, revoked].reduce(apiKeyDecider.evolve, apiKeyDecider.initialState())).toEqual({ status: 'revoked', key });
    spec.given([issued, revoked]).when({ type: 'IssueApiKey', ...key, now }).thenThrows('conflict');
  });
});

describe('api key usage: once an hour', () => {
  const usage = deciderSpec(apiKeyUsageDecider);
  it('records the first use of the hour only', () => {
    const used = { type: 'ApiKeyUsed' as const, data: { key_id: 'key-1', used_at: now } };
    usage.given([]).when({ type: 'RecordApiKeyUse', key_id: 'key-1', now }).then([used]);
    usage.given([used]).when({ type: 'RecordApiKeyUse', key_id: 'key-1', now: '2026-11-23T10:59:00.000Z' }).then([]);
  });
});
