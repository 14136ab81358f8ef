import { Repository } from '@arbor/domain';
import {
  ORGS_COLLECTION,
  REPO_TAGS_COLLECTION,
  repoTagKey,
  REPOSITORIES_COLLECTION,
  repositoryKey,
  type OrgDocument,
  type RepoTagDocument,
  type RepositoryDocument,
  type WriteOp,
} from '@arbor/read-models';
import { projectionOf } from './projection';

/**
 * The `repositories` and `repo_tags` read models: an org's repositories and their tags, and the
 * public listing by org name. A repository's document carries its org's name (names never
 * change); a tag's carries its repository's name and org, read from the repository's document.
 */
export const repositoriesProjection = projectionOf(Repository, {
  name: 'repositories',
  collections: [REPOSITORIES_COLLECTION, REPO_TAGS_COLLECTION],
  indexes: [
    { collection: REPOSITORIES_COLLECTION, keys: { org_id: 1, name: 1 } },
    { collection: REPOSITORIES_COLLECTION, keys: { is_public: 1, org_name: 1, name: 1 } },
    { collection: REPOSITORIES_COLLECTION, keys: { repo_id: 1 } },
    { collection: REPO_TAGS_COLLECTION, keys: { repo_id: 1, tag_name: 1 } },
    { collection: REPO_TAGS_COLLECTION, keys: { commit_id: 1 } },
  ],
  async project(event, _recorded, reads): Promise<WriteOp[]> {
    const byRepo = { repo_id: event.data.repo_id };
    switch (event.type) {
      case 'RepositoryCreated': {
        const { repo_id, org_id, name, description, created_at } = event.data;
        const org = await reads.findOne<OrgDocument>(ORGS_COLLECTION, { _id: org_id });
        const _id = repositoryKey(org_id, name);
        const doc: RepositoryDocument = { _id, repo_id, org_id, org_name: org?.name ?? org_id, name, description, is_public: false, created_at };
        return [{ op: 'replaceOne', collection: REPOSITORIES_COLLECTION, filter: { _id }, doc, upsert: true }];
      }
      case 'RepositoryVisibilityChanged':
        return [{ op: 'updateOne', collection: REPOSITORIES_COLLECTION, filter: byRepo, update: { $set: { is_public: event.data.is_public } } }];
      case 'RepositoryDeleted':
        return [
          { op: 'deleteMany', collection: REPO_TAGS_COLLECTION, filter: byRepo },
          { op: 'deleteOne', collection: REPOSITORIES_COLLECTION, filter: byRepo },
        ];
      case 'RepoTagCreated': {
        const { repo_id, tag_id, tag_name, commit_id, description, created_at } = event.data;
        const repository = await reads.findOne<RepositoryDocument>(REPOSITORIES_COLLECTION, byRepo);
        const _id = repoTagKey(repo_id, tag_name);
        const doc: RepoTagDocument = {
          _id, tag_id, repo_id, org_id: repository!.org_id, repo_name: repository!.name, tag_name, commit_id, description, created_at, updated_at: created_at,
        };
        return [{ op: 'replaceOne', collection: REPO_TAGS_COLLECTION, filter: { _id }, doc, upsert: true }];
      }
      case 'RepoTagMoved': {
        const { repo_id, tag_name, commit_id, moved_at } = event.data;
        return [{ op: 'updateOne', collection: REPO_TAGS_COLLECTION, filter: { _id: repoTagKey(repo_id, tag_name) }, update: { $set: { commit_id, updated_at: moved_at } } }];
      }
      case 'RepoTagDescribed': {
        const { repo_id, tag_name, description, changed_at } = event.data;
        return [{ op: 'updateOne', collection: REPO_TAGS_COLLECTION, filter: { _id: repoTagKey(repo_id, tag_name) }, update: { $set: { description, updated_at: changed_at } } }];
      }
      case 'RepoTagDeleted':
        return [{ op: 'deleteOne', collection: REPO_TAGS_COLLECTION, filter: { _id: repoTagKey(event.data.repo_id, event.data.tag_name) } }];
    }
  },
});
