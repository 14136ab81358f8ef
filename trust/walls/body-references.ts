import { randomUUID } from 'node:crypto';
import type { OrgResources } from '../support/org-resources';

/** Body fields that name a resource, and what names nothing in their place. */
export const BODY_REFERENCES: Record<string, (foreign: OrgResources) => { foreign: unknown; missing: unknown }> = {
  'FromCommitVmRequestDto.commit_id': (a) => ({ foreign: a.commit, missing: randomUUID() }),
  'CreateCommitTagRequestDto.commit_id': (a) => ({ foreign: a.commit, missing: randomUUID() }),
  'UpdateCommitTagRequestDto.commit_id': (a) => ({ foreign: a.commit, missing: randomUUID() }),
  'CreateRepoTagRequestDto.commit_id': (a) => ({ foreign: a.commit, missing: randomUUID() }),
  'UpdateRepoTagRequestDto.commit_id': (a) => ({ foreign: a.commit, missing: randomUUID() }),
  'VmExecStreamAttachRequestDto.exec_id': (a) => ({ foreign: a.exec, missing: randomUUID() }),
  'ForkRepositoryRequestDto.source_repo': (a) => ({ foreign: a.repo, missing: 'nobody-has-this' }),
};

/**
 * Ids a client chooses: another org's must be as free as one nobody has. They are global today
 * (exec_id and commit_id answer 409 "already exists" with another org's id, and show it): they
 * join BODY_REFERENCES when client ids are scoped by org (issue 13, the `bounds` work).
 */
export const CLIENT_CHOSEN_IDS: typeof BODY_REFERENCES = {
  'VmExecRequestDto.exec_id': (a) => ({ foreign: a.exec, missing: randomUUID() }),
  'VmCommitRequestDto.commit_id': (a) => ({ foreign: a.commit, missing: randomUUID() }),
};
