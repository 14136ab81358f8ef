import { failed, notFound } from '../shared/domain-error';
import { failedWith, succeeded, type IntentOutcomes, type OutcomeRules } from '../shared/outcomes';
import type { VmEvent } from './vm.events';

/** An operation on a booted VM ends when the worker reports it done or failed, or the VM is gone. */
const operation = (done: VmEvent['type']): OutcomeRules<VmEvent> => ({
  [done]: () => succeeded,
  VmOperationFailed: (event) => failedWith(failed(event.data.reason)),
  VmDied: (event) => failedWith(failed(event.data.reason)),
  VmDeleted: () => failedWith(notFound('vm')),
});

/**
 * When each VM intent is done. A VM has one operation in progress at a time (the decider refuses a
 * second), so the first of these events after an intent is its answer.
 */
export const vmOutcomes: IntentOutcomes<VmEvent> = {
  VmCreationRequested: {
    VmBooted: () => succeeded,
    // Appended with VmDeleted: the VM that could not boot is gone (docs/api-behaviour.md#vm-lifecycle).
    VmBootFailed: (event) => failedWith(failed(`vm ${event.data.vm_id} failed to boot: ${event.data.reason}`)),
    VmDied: (event) => failedWith(failed(`vm ${event.data.vm_id} failed to boot: ${event.data.reason}`)),
    VmDeleted: () => failedWith(notFound('vm')), // deleted by its owner while it booted
  },
  VmPauseRequested: operation('VmPaused'),
  VmResumeRequested: operation('VmResumed'),
  VmCommitRequested: operation('VmCommitted'),
  VmDiskResizeRequested: operation('VmDiskResized'),
  VmSshKeyRotationRequested: operation('VmSshKeyRotated'),
  VmDeletionRequested: {
    VmDeleted: () => succeeded,
    VmOperationFailed: (event) => failedWith(failed(event.data.reason)),
  },
};
