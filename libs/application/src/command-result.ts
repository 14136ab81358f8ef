import { DomainError } from '@arbor/domain';
import { WaitTimeoutError } from './wait-until';

/**
 * A failed command's `result` label: the domain error's kind (not_found, conflict, failed, …),
 * "timeout" when its effect did not show in time (the api's 504), or "error" for anything else.
 */
export function commandResult(error: unknown): string {
  if (error instanceof DomainError) return error.kind;
  return error instanceof WaitTimeoutError ? 'timeout' : 'error';
}
