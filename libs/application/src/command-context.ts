import { randomUUID } from 'node:crypto';
import { deterministicUuid } from '@arbor/domain';
import type { RecordedEvent } from '@arbor/event-store';

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

/**
 * The context of a step one command takes on behalf of another: its own command id, derived from
 * the parent's and the step's name (so a retry of the parent repeats the step's event ids), the
 * rest of the parent's context kept.
 */
export function stepContext(parent: CommandContext, ...step: string[]): CommandContext {
  return { ...parent, command_id: deterministicUuid(parent.command_id, ...step) };
}

/**
 * The worker's context for an outcome of `intent`: caused by the intent, correlated with the
 * request that appended it, in its org, acted by no key. The command id derives from the intent
 * and `step`, so reporting the same outcome again after a crash appends nothing new.
 */
export function causedBy(intent: RecordedEvent, ...step: string[]): CommandContext {
  return {
    command_id: deterministicUuid(intent.id, ...step),
    correlation_id: intent.metadata.correlation_id,
    causation_id: intent.id,
    actor_key_id: null,
    org_id: intent.metadata.org_id,
  };
}
