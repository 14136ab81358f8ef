import { DomainError } from '../shared/domain-error';
import { failedWith, succeeded, type IntentOutcomes } from '../shared/outcomes';
import type { ForkEvent } from './fork.events';

/** A fork is done when the tag exists in the caller's repository, or when what it made is removed. */
export const forkOutcomes: IntentOutcomes<ForkEvent> = {
  ForkRequested: {
    RepoForked: () => succeeded,
    ForkFailed: (event) => failedWith(new DomainError(event.data.kind, event.data.reason)),
  },
};
