import type { DomainCommand } from '../shared/decider';

/** `replaces`: the holder the caller found gone (its VM deleted), whose name it takes over; null for a free name. */
export type ReserveProjectName = DomainCommand<'ReserveProjectName', { org_id: string; name: string; project_id: string; replaces: string | null; now: string }>;
export type ProjectNameCommand = ReserveProjectName;
