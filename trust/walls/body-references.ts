import { randomUUID } from 'node:crypto';
import type { ApiAnswer, RequestOptions } from '../../test/support/api-client';
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

type Request = (method: string, path: string, options?: RequestOptions) => Promise<ApiAnswer>;

async function made(request: Request, path: string, key: string, body: unknown): Promise<void> {
  const answer = await request('POST', path, { key, body });
  if (answer.status >= 300) throw new Error(`POST ${path} answered ${answer.status}: ${answer.text}`);
}

/**
 * Body fields whose id the client chooses for a new resource, each with how org A makes a fresh
 * one under a chosen id (one per request of B's: once B chose an id, it is B's own too). Ids
 * clients choose are scoped by org (exec streams are keyed by org and id; a chosen commit id is the
 * commit `orgCommitId(org, id)` in the log), so another org's id must be exactly as free as one
 * nobody has: both answered alike, and both taken. The answer echoes the id the client chose.
 */
export const CLIENT_CHOSEN_IDS: Record<string, (home: OrgResources, request: Request) => Promise<string>> = {
  'VmExecRequestDto.exec_id': async (a, request) => {
    const exec_id = randomUUID();
    await made(request, `/api/v1/vm/${a.vm}/exec`, a.key, { command: ['echo', 'home'], exec_id });
    return exec_id;
  },
  'VmCommitRequestDto.commit_id': async (a, request) => {
    const commit_id = randomUUID();
    await made(request, `/api/v1/vm/${a.vm}/commit`, a.key, { commit_id });
    return commit_id;
  },
};
