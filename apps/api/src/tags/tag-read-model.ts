import { Inject, Injectable } from '@nestjs/common';
import { notFound } from '@arbor/domain';
import { READ_MODEL_STORE, type ReadModelStore, COMMIT_TAGS_COLLECTION, commitTagKey, type CommitTagDocument } from '@arbor/read-models';

/** Reads of the `commit_tags` read model, scoped to the caller's org. */
@Injectable()
export class TagReadModel {
  constructor(@Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore) {}

  /** The same reads over another store: the read models as of a log position (ReadModelsAsOf). */
  over(store: ReadModelStore): TagReadModel {
    return new TagReadModel(store);
  }

  async get(org_id: string, tag_name: string): Promise<CommitTagDocument> {
    const tag = await this.readModels.findOne<CommitTagDocument>(COMMIT_TAGS_COLLECTION, { _id: commitTagKey(org_id, tag_name) });
    if (!tag) throw notFound('tag');
    return tag;
  }

  list(org_id: string): Promise<CommitTagDocument[]> {
    return this.readModels.find<CommitTagDocument>(COMMIT_TAGS_COLLECTION, { org_id }, { sort: { tag_name: 1 } });
  }
}
