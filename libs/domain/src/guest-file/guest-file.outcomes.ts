import { DomainError, failed, notFound } from '../shared/domain-error';
import { failedWith, succeeded, type IntentOutcomes, type Outcome } from '../shared/outcomes';
import type { FileOperationFailed, GuestFileEvent } from './guest-file.events';

/** What a failed file operation tells the client, by the kind of failure the worker found. */
function failure({ data: { kind, reason } }: FileOperationFailed): Outcome {
  switch (kind) {
    case 'not_found':
      return failedWith(notFound('file'));
    case 'not_a_file':
      return failedWith(new DomainError('invalid', reason));
    case 'parent_missing':
      return failedWith(new DomainError('not_found', reason));
    case 'too_large':
      return failedWith(new DomainError('too_large', reason));
    case 'vm_unavailable':
      return failedWith(new DomainError('conflict', `vm cannot run file operations now: ${reason}`));
    default:
      return failedWith(failed(reason));
  }
}

/** A read or a write is done when the worker reports it done, or failed with a kind of failure. */
export const guestFileOutcomes: IntentOutcomes<GuestFileEvent> = {
  FileWriteRequested: { FileWritten: () => succeeded, FileOperationFailed: failure },
  FileReadRequested: { FileRead: () => succeeded, FileOperationFailed: failure },
};
