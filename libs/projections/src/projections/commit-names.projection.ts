import { CommitIdReservation } from '@arbor/domain';
import { type WriteOp, COMMIT_NAMES_COLLECTION, type CommitNameDocument } from '@arbor/read-models';
import { projectionOf } from './projection';

/** The id in the log of the commit a `commitid-<id>` stream reserves: its key. */
const idInLog = (stream_id: string) => stream_id.slice(CommitIdReservation.stream('').length);

/**
 * The `commit_names` read model: each org's chosen id for the commit it stands for in the log
 * (`orgCommitId`), so the API shows an org its own names. A reservation given back keeps its
 * name: the id in the log is derived from the org and the name, so the pair never changes.
 */
export const commitNamesProjection = projectionOf(CommitIdReservation, {
  name: 'commit_names',
  collections: [COMMIT_NAMES_COLLECTION],
  indexes: [{ collection: COMMIT_NAMES_COLLECTION, keys: { org_id: 1 } }],
  project(event, recorded): WriteOp[] {
    if (event.type !== 'CommitIdReserved' || !recorded.metadata.org_id) return [];
    const _id = idInLog(recorded.stream_id);
    const doc: CommitNameDocument = { _id, org_id: recorded.metadata.org_id, commit_id: event.data.commit_id };
    return [{ op: 'replaceOne', collection: COMMIT_NAMES_COLLECTION, filter: { _id }, doc, upsert: true }];
  },
});
