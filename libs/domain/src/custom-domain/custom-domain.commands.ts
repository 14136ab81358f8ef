import type { DomainCommand } from '../shared/decider';

/** `domain`: as the client sent it; the decider checks it (RFC 1123) and keeps it lowercase. */
export type AddDomain = DomainCommand<'AddDomain', { domain_id: string; domain: string; vm_id: string; org_id: string; now: string }>;
/** DELETE /domains/{id}: the caller's org; a name held under another id or org is not found. */
export type RemoveDomain = DomainCommand<'RemoveDomain', { domain_id: string; org_id: string; now: string }>;
/** The VM was deleted: its name goes free (nothing to do when the name is no longer the VM's). */
export type ReleaseDomain = DomainCommand<'ReleaseDomain', { vm_id: string; now: string }>;
export type CustomDomainCommand = AddDomain | RemoveDomain | ReleaseDomain;
