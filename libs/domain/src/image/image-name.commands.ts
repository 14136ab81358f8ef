import type { DomainCommand } from '../shared/decider';

/**
 * `replacing`: the holder the caller found finished (its image failed or deleted, or never
 * requested long after its reservation): the name may be taken over from exactly that holder.
 */
export type ReserveImageName = DomainCommand<'ReserveImageName', { org_id: string; image_name: string; image_id: string; replacing?: string | null; now: string }>;
export type ReleaseImageName = DomainCommand<'ReleaseImageName', { image_id: string; now: string }>;

export type ImageNameCommand = ReserveImageName | ReleaseImageName;
