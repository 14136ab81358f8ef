import type { DomainCommand } from '../shared/decider';
import type { ImageStage } from './image-source';
import type { ImageCreationRequested } from './image.events';

/** From the API, once the name is reserved for this image. */
export type RequestImageCreation = DomainCommand<'RequestImageCreation', Omit<ImageCreationRequested['data'], 'requested_at'> & { now: string }>;
export type SetImageVisibility = DomainCommand<'SetImageVisibility', { is_public: boolean; now: string }>;
export type UseImage = DomainCommand<'UseImage', { vm_id: string; org_id: string; now: string }>;
export type ReleaseImage = DomainCommand<'ReleaseImage', { vm_id: string; now: string }>;
export type DeleteImage = DomainCommand<'DeleteImage', { now: string }>;

/** From the worker that builds it. `attempt` 1 claims the job; the next number takes it up again. */
export type StartImageBuild = DomainCommand<'StartImageBuild', { worker_id: string; attempt: number; now: string }>;
export type RecordImageProgress = DomainCommand<'RecordImageProgress', { stage: ImageStage; detail: string | null; now: string }>;
export type RecordImageCreated = DomainCommand<'RecordImageCreated', { worker_id: string; size_mib: number; now: string }>;
export type FailImageCreation = DomainCommand<'FailImageCreation', { reason: string; now: string }>;

export type ImageCommand =
  | RequestImageCreation
  | SetImageVisibility
  | UseImage
  | ReleaseImage
  | DeleteImage
  | StartImageBuild
  | RecordImageProgress
  | RecordImageCreated
  | FailImageCreation;
