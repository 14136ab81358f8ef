import type { Decider } from '../shared/decider';
import { DomainError, invalid } from '../shared/domain-error';
import type { EnvVarsCommand } from './env-vars.commands';
import type { EnvVarsEvent } from './env-vars.events';

export const ENV_VAR_KEY_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const MAX_ENV_VAR_KEY_LENGTH = 256;
export const MAX_ENV_VAR_VALUE_LENGTH = 8192;
/** Bounds /etc/environment: every VM gets the whole set, in the event that asks for the VM too. */
export const MAX_ENV_VARS = 256;
/**
 * The whole set as /etc/environment lines, at most: it travels in every VmCreationRequested,
 * and EventStoreDB refuses an append over 1 MiB by default.
 */
export const MAX_ENV_VARS_BYTES = 256 * 1024;

export interface EnvVarsState {
  vars: Record<string, string>;
}

/**
 * A variable that would not come back from /etc/environment as it was set is refused, never
 * mangled: a line break or NUL would end the line early. Every other character (`=`, quotes,
 * spaces) is kept as is.
 */
function requireVariable(key: string, value: unknown): void {
  if (!ENV_VAR_KEY_PATTERN.test(key)) throw invalid(`env var key '${key}' must match ${ENV_VAR_KEY_PATTERN.source}`);
  if (key.length > MAX_ENV_VAR_KEY_LENGTH) throw invalid(`env var key '${key.slice(0, 32)}…' is longer than ${MAX_ENV_VAR_KEY_LENGTH} characters`);
  if (typeof value !== 'string') throw invalid(`env var '${key}' must have a string value`);
  if (value.length > MAX_ENV_VAR_VALUE_LENGTH) throw invalid(`env var '${key}' has a value longer than ${MAX_ENV_VAR_VALUE_LENGTH} characters`);
  if (/[\n\r\0]/.test(value)) throw invalid(`env var '${key}' has a line break or NUL in its value, which /etc/environment cannot hold`);
}

function decide(command: EnvVarsCommand, state: EnvVarsState): EnvVarsEvent[] {
  switch (command.type) {
    case 'SetEnvVars': {
      const { owner_id, vars, replace, now } = command;
      for (const [key, value] of Object.entries(vars)) requireVariable(key, value);
      const next = replace ? { ...vars } : { ...state.vars, ...vars };
      if (Object.keys(next).length > MAX_ENV_VARS) throw invalid(`at most ${MAX_ENV_VARS} env vars may be set (this would make ${Object.keys(next).length})`);
      const bytes = Object.entries(next).reduce((total, [key, value]) => total + Buffer.byteLength(`${key}=${value}\n`), 0);
      if (bytes > MAX_ENV_VARS_BYTES) throw invalid(`the env vars may take at most ${MAX_ENV_VARS_BYTES} bytes as KEY=VALUE lines (this would make ${bytes})`);
      return [{ type: 'EnvVarsSet', data: { owner_id, vars, replace, set_at: now } }];
    }
    case 'DeleteEnvVar':
      if (!Object.hasOwn(state.vars, command.key)) throw new DomainError('not_found', 'Environment variable not found');
      return [{ type: 'EnvVarDeleted', data: { owner_id: command.owner_id, key: command.key, deleted_at: command.now } }];
  }
}

function evolve(state: EnvVarsState, event: EnvVarsEvent): EnvVarsState {
  switch (event.type) {
    case 'EnvVarsSet':
      return { vars: event.data.replace ? { ...event.data.vars } : { ...state.vars, ...event.data.vars } };
    case 'EnvVarDeleted': {
      const { [event.data.key]: _, ...vars } = state.vars;
      return { vars };
    }
  }
}

export const envVarsDecider: Decider<EnvVarsCommand, EnvVarsState, EnvVarsEvent> = { initialState: () => ({ vars: {} }), decide, evolve };
