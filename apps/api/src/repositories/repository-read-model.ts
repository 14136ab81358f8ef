import { Inject, Injectable } from '@nestjs/common';
import { notFound } from '@arbor/domain';
import {
  READ_MODEL_STORE,
  REPO_TAGS_COLLECTION,
  repoTagKey,
  REPOSITORIES_COLLECTION,
  repositoryKey,
  type ReadModelStore,
  type RepoTagDocument,
  type RepositoryDocument,
} from '@arbor/read-models';

/**
 * Reads of the `repositories` and `repo_tags` read models: an org's own repositories (private or
 * public), and public ones by `<org_name>/<name>` for everybody. Another org's private repository
 * is reported exactly like a missing one.
 */
@Injectable()
export class RepositoryReadModel {
  constructor(@Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore) {}

  /** The same reads over another store: the read models as of a log position (ReadModelsAsOf). */
  over(store: ReadModelStore): RepositoryReadModel {
    return new RepositoryReadModel(store);
  }

  list(org_id: string): Promise<RepositoryDocument[]> {
    return this.readModels.find<RepositoryDocument>(REPOSITORIES_COLLECTION, { org_id }, { sort: { name: 1 } });
  }

  async get(org_id: string, name: string): Promise<RepositoryDocument> {
    const repository = await this.readModels.findOne<RepositoryDocument>(REPOSITORIES_COLLECTION, { _id: repositoryKey(org_id, name) });
    if (!repository) throw notFound('repository');
    return repository;
  }

  listPublic(): Promise<RepositoryDocument[]> {
    return this.readModels.find<RepositoryDocument>(REPOSITORIES_COLLECTION, { is_public: true }, { sort: { org_name: 1, name: 1 } });
  }

  async getPublic(org_name: string, name: string): Promise<RepositoryDocument> {
    const repository = await this.readModels.findOne<RepositoryDocument>(REPOSITORIES_COLLECTION, { is_public: true, org_name, name });
    if (!repository) throw notFound('repository');
    return repository;
  }

  tags(repository: RepositoryDocument): Promise<RepoTagDocument[]> {
    return this.readModels.find<RepoTagDocument>(REPO_TAGS_COLLECTION, { repo_id: repository.repo_id }, { sort: { tag_name: 1 } });
  }

  async tag(repository: RepositoryDocument, tag_name: string): Promise<RepoTagDocument> {
    const tag = await this.readModels.findOne<RepoTagDocument>(REPO_TAGS_COLLECTION, { _id: repoTagKey(repository.repo_id, tag_name) });
    if (!tag) throw notFound('tag');
    return tag;
  }
}
