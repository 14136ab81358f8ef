import { eventTypes, type DomainEvent } from '../shared/decider';

/**
 * Stream `projectname-<org>-<name>`: who holds a project name in an org. Appended at the exact
 * revision read, so of two deploys under one name only one wins (409 for the other). A name is
 * held while its project's VM exists: the next deploy under it takes it over (`replaces`) once
 * that VM is deleted, or once a reservation whose project was never asked for is old.
 */
export type ProjectNameReserved = DomainEvent<'ProjectNameReserved', { org_id: string; name: string; project_id: string; replaces: string | null; reserved_at: string }>;

export type ProjectNameEvent = ProjectNameReserved;
export const PROJECT_NAME_EVENT_TYPES = eventTypes<ProjectNameEvent>()('ProjectNameReserved');
