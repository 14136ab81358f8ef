import { eventTypes, type DomainEvent } from '../shared/decider';

/**
 * Stream `imagename-<org>-<name>`: the reservation of an image name in an org. Held by one image
 * from before its request is appended until it fails or is deleted, so a name with an unfinished
 * job or a built image cannot be taken twice; once released, the name is free for a new image.
 */
export type ImageNameReserved = DomainEvent<'ImageNameReserved', { org_id: string; image_name: string; image_id: string; reserved_at: string }>;
export type ImageNameReleased = DomainEvent<'ImageNameReleased', { org_id: string; image_name: string; image_id: string; released_at: string }>;

export type ImageNameEvent = ImageNameReserved | ImageNameReleased;
export const IMAGE_NAME_EVENT_TYPES = eventTypes<ImageNameEvent>()('ImageNameReserved', 'ImageNameReleased');
