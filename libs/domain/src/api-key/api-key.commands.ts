import type { DomainCommand } from '../shared/decider';
import type { ApiKeyIssued } from './api-key.events';

export type IssueApiKey = DomainCommand<'IssueApiKey', Omit<ApiKeyIssued['data'], 'issued_at'> & { now: string }>;
export type RevokeApiKey = DomainCommand<'RevokeApiKey', { now: string }>;
export type ApiKeyCommand = IssueApiKey | RevokeApiKey;
