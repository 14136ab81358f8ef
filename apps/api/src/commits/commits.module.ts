import { Module } from '@nestjs/common';
import { TagReadModel } from '../tags/tag-read-model';
import { ReadModelsAsOf } from '../time-travel/read-models-as-of';
import { CommitNames } from './commit-names';
import { CommitReadModel } from './commit-read-model';
import { CommitSourceResolver } from './commit-source-resolver';
import { CommitsController } from './commits.controller';
import { DeleteCommitHandler, UpdateCommitHandler } from './commands/update-commit.handler';
import { GetCommitParentsHandler, ListCommitsHandler } from './queries/commit-queries';

/** Commits: list (own, public), update, delete, the parent chain; commit lookups for VMs and tags. */
@Module({
  controllers: [CommitsController],
  providers: [CommitReadModel, CommitNames, TagReadModel, ReadModelsAsOf, CommitSourceResolver, UpdateCommitHandler, DeleteCommitHandler, ListCommitsHandler, GetCommitParentsHandler],
  exports: [CommitReadModel, CommitNames, TagReadModel, ReadModelsAsOf, CommitSourceResolver],
})
export class CommitsModule {}
