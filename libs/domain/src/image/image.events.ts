import { eventTypes, type DomainEvent } from '../shared/decider';
import type { ImageSizeRule, ImageSource, ImageStage } from './image-source';

/**
 * Stream `image-<id>`: a base image of an org, from the request to build it to its deletion. The
 * name is reserved on its own stream (`imagename-<org>-<name>`) before the request is appended.
 * A worker claims the job (ImageBuildStarted), reports its stages and ends it: ImageCreated (the
 * image lives on that worker's host) or ImageCreationFailed with the reason. VMs booted from it
 * hold it (ImageUsedByVm … ImageReleasedByVm), so it cannot be deleted under them.
 */
export type ImageCreationRequested = DomainEvent<
  'ImageCreationRequested',
  {
    image_id: string;
    org_id: string;
    /** The API key that asked (the contract's `owner_id`). */
    owner_id: string;
    image_name: string;
    source: ImageSource;
    /** MiB, meaning what `size_rule` says. */
    size_mib: number;
    size_rule: ImageSizeRule;
    description: string | null;
    requested_at: string;
  }
>;
/**
 * A worker took the job (attempt 1), or took it up again after it stopped mid-way (a restart):
 * the build starts over from the source.
 */
export type ImageBuildStarted = DomainEvent<'ImageBuildStarted', { image_id: string; worker_id: string; attempt: number; started_at: string }>;
/** The job reached a stage (or moved on within one: `detail` says how far, e.g. bytes downloaded). */
export type ImageBuildProgressed = DomainEvent<'ImageBuildProgressed', { image_id: string; stage: ImageStage; detail: string | null; at: string }>;
/** Built: VMs of it boot on `worker_id`'s host. `size_mib`: the disk a VM of it gets (at least). */
export type ImageCreated = DomainEvent<'ImageCreated', { image_id: string; worker_id: string; size_mib: number; created_at: string }>;
/** The job ended without an image; `reason` is the status's error_message. The name is free again. */
export type ImageCreationFailed = DomainEvent<'ImageCreationFailed', { image_id: string; stage: ImageStage; reason: string; failed_at: string }>;
/** Public: every org lists it and may boot it (new_root prefers an org's own image of the name). */
export type ImageVisibilityChanged = DomainEvent<'ImageVisibilityChanged', { image_id: string; is_public: boolean; changed_at: string }>;
/** A VM boots the image: appended by the API right after its VmCreationRequested (and by the worker before it boots it). */
export type ImageUsedByVm = DomainEvent<'ImageUsedByVm', { image_id: string; vm_id: string; used_at: string }>;
/** The VM's machine is gone: it no longer holds the image. */
export type ImageReleasedByVm = DomainEvent<'ImageReleasedByVm', { image_id: string; vm_id: string; released_at: string }>;
/** Final: no VM may boot it any more; its worker removes its files once nothing on the host uses them. */
export type ImageDeleted = DomainEvent<'ImageDeleted', { image_id: string; deleted_at: string }>;

export type ImageEvent =
  | ImageCreationRequested
  | ImageBuildStarted
  | ImageBuildProgressed
  | ImageCreated
  | ImageCreationFailed
  | ImageVisibilityChanged
  | ImageUsedByVm
  | ImageReleasedByVm
  | ImageDeleted;
export const IMAGE_EVENT_TYPES = eventTypes<ImageEvent>()(
  'ImageCreationRequested',
  'ImageBuildStarted',
  'ImageBuildProgressed',
  'ImageCreated',
  'ImageCreationFailed',
  'ImageVisibilityChanged',
  'ImageUsedByVm',
  'ImageReleasedByVm',
  'ImageDeleted',
);
