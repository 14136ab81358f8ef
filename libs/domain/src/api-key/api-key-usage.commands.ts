import type { DomainCommand } from '../shared/decider';

export type RecordApiKeyUse = DomainCommand<'RecordApiKeyUse', { key_id: string; now: string }>;
export type ApiKeyUsageCommand = RecordApiKeyUse;
