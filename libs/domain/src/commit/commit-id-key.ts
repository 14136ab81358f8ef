import { deterministicUuid } from '../shared/deterministic-id';

/**
 * Commit ids clients choose are scoped by org: org O's chosen id X is the commit
 * `orgCommitId(O, X)` in the log (its streams `commit-…` and `commitid-…`, its snapshot, every
 * event and document that refers to it), and O names it and sees it as X everywhere in the API.
 * Another org's X is another commit, which O neither meets nor learns of. Ids Arbor generates are
 * the commit's id in the log as they are (random, so global), and so are chosen ids from before
 * the scoping (their `commitid-<id>` stream is keyed by the id itself).
 */
export const orgCommitId = (org_id: string, chosen: string): string => deterministicUuid('client-commit-id', org_id, chosen.toLowerCase());
