import type { DomainCommand } from '../shared/decider';

/** `replace` false: upsert these; true: exactly these, nothing else. */
export type SetEnvVars = DomainCommand<'SetEnvVars', { owner_id: string; vars: Record<string, string>; replace: boolean; now: string }>;
export type DeleteEnvVar = DomainCommand<'DeleteEnvVar', { owner_id: string; key: string; now: string }>;
export type EnvVarsCommand = SetEnvVars | DeleteEnvVar;
