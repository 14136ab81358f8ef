import { Module } from '@nestjs/common';
import { CommitsModule } from '../commits/commits.module';
import { VmsModule } from '../vms/vms.module';
import { ForkRepositoryHandler } from './commands/fork-repository.handler';
import { CreateRepoTagHandler, DeleteRepoTagHandler, UpdateRepoTagHandler } from './commands/repo-tag-command.handlers';
import { CreateRepositoryHandler, DeleteRepositoryHandler, SetRepositoryVisibilityHandler } from './commands/repository-command.handlers';
import { PublicRepositoriesController } from './public-repositories.controller';
import { RepositoriesController } from './repositories.controller';
import { RepositoryReadModel } from './repository-read-model';

/** Repositories and their tags (`/repositories`), fork, and the public listing (`/public/repositories`). */
@Module({
  imports: [CommitsModule, VmsModule],
  controllers: [RepositoriesController, PublicRepositoriesController],
  providers: [
    RepositoryReadModel,
    CreateRepositoryHandler,
    SetRepositoryVisibilityHandler,
    DeleteRepositoryHandler,
    CreateRepoTagHandler,
    UpdateRepoTagHandler,
    DeleteRepoTagHandler,
    ForkRepositoryHandler,
  ],
})
export class RepositoriesModule {}
