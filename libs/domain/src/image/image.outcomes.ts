import { DomainError } from '../shared/domain-error';
import { failedWith, succeeded, type IntentOutcomes } from '../shared/outcomes';
import type { ImageEvent } from './image.events';

/** An image job is done when the image exists, or failed (its reason is the job's error_message). */
export const imageOutcomes: IntentOutcomes<ImageEvent> = {
  ImageCreationRequested: {
    ImageCreated: () => succeeded,
    ImageCreationFailed: (event) => failedWith(new DomainError('failed', event.data.reason)),
  },
};
