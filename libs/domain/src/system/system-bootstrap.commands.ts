import type { DomainCommand } from '../shared/decider';

export type BootstrapSystem = DomainCommand<'BootstrapSystem', { org_id: string; key_id: string; now: string }>;
export type SystemBootstrapCommand = BootstrapSystem;
