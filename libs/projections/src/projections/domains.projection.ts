import { CustomDomain } from '@arbor/domain';
import { DOMAINS_COLLECTION, type DomainDocument, type WriteOp } from '@arbor/read-models';
import { projectionOf } from './projection';

/** The `domains` read model: the custom domains in use, what the domain reads and the edge's routes serve. */
export const domainsProjection = projectionOf(CustomDomain, {
  name: 'domains',
  collections: [DOMAINS_COLLECTION],
  indexes: [
    { collection: DOMAINS_COLLECTION, keys: { domain: 1 } },
    { collection: DOMAINS_COLLECTION, keys: { org_id: 1, vm_id: 1, created_at: 1 } },
  ],
  project(event): WriteOp[] {
    switch (event.type) {
      case 'DomainAdded': {
        const { domain_id, domain, vm_id, org_id, created_at } = event.data;
        const doc: DomainDocument = { _id: domain_id, domain_id, domain, vm_id, org_id, created_at };
        return [{ op: 'replaceOne', collection: DOMAINS_COLLECTION, filter: { _id: domain_id }, doc, upsert: true }];
      }
      case 'DomainRemoved':
        return [{ op: 'deleteOne', collection: DOMAINS_COLLECTION, filter: { _id: event.data.domain_id } }];
    }
  },
});
