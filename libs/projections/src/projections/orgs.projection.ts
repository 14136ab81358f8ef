import { Org } from '@arbor/domain';
import { ORGS_COLLECTION, type OrgDocument, type WriteOp } from '@arbor/read-models';
import { projectionOf } from './projection';

/** The `orgs` read model: org names, for the repositories that show them and the member endpoints. */
export const orgsProjection = projectionOf(Org, {
  name: 'orgs',
  collections: [ORGS_COLLECTION],
  indexes: [{ collection: ORGS_COLLECTION, keys: { name: 1 } }],
  project(event): WriteOp[] {
    if (event.type !== 'OrgCreated') return [];
    const { org_id, name, created_at } = event.data;
    const doc: OrgDocument = { _id: org_id, org_id, name, created_at };
    return [{ op: 'replaceOne', collection: ORGS_COLLECTION, filter: { _id: org_id }, doc, upsert: true }];
  },
});
