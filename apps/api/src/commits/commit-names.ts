import { Inject, Injectable } from '@nestjs/common';
import { COMMIT_NAMES_COLLECTION, READ_MODEL_STORE, type CommitNameDocument, type ReadModelStore } from '@arbor/read-models';

/** How one org is shown commit ids: a commit id in the log → the id the org sees. */
export type CommitNaming = (commit_id: string) => string;

/** Ids as they are in the log (nothing is named otherwise). */
export const AS_IN_LOG: CommitNaming = (commit_id) => commit_id;

/**
 * The ids an org sees for commits. A client-chosen id names a commit whose id in the log is
 * derived from the org and the chosen id (`orgCommitId`): its org sees (and names) it by the
 * chosen id everywhere — a commit, its parent chain, a VM's parent commit, a tag's or a
 * repository tag's commit — and every other org by its id in the log (a public commit, a public
 * repository's tag). Names never change once reserved, so the live `commit_names` serve past
 * read models (`as_of`) as well.
 */
@Injectable()
export class CommitNames {
  constructor(@Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore) {}

  /** The naming of the commits `ids` (ids in the log; null and undefined are skipped) for org `org_id`. */
  async namingFor(org_id: string, ids: Iterable<string | null | undefined>): Promise<CommitNaming> {
    const wanted = [...new Set([...ids].filter((id): id is string => typeof id === 'string'))];
    if (wanted.length === 0) return AS_IN_LOG;
    const names = await this.readModels.find<CommitNameDocument>(COMMIT_NAMES_COLLECTION, { _id: { $in: wanted }, org_id });
    const byId = new Map(names.map((name) => [name._id, name.commit_id]));
    return (commit_id) => byId.get(commit_id) ?? commit_id;
  }
}
