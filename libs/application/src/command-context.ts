import { randomUUID } from 'node:crypto';

/**
 * Who asked, and what the request belongs to. Carried into every event's metadata so the log
 * ties an API request to the worker's outcome events (correlation) and each event to its direct
 * cause (causation).
 */
export interface CommandContext {
  /** Unique per logical command; event ids derive from it, so a retry appends nothing new. */
  command_id: string;
  correlation_id: string;
  causation_id: string;
  actor_key_id: string | null;
  org_id: string | null;
}

export function newCommandContext(partial: Partial<CommandContext> & Pick<CommandContext, 'org_id' | 'actor_key_id'>): CommandContext {
  const command_id = partial.command_id ?? randomUUID();
  return {
    command_id,
    correlation_id: partial.correlation_id ?? command_id,
    causation_id: partial.causation_id ?? command_id,
    actor_key_id: partial.actor_key_id,
    org_id: partial.org_id,
  };
}
