import { Module } from '@nestjs/common';
import { CommitsModule } from '../commits/commits.module';
import { CreateTagHandler, DeleteTagHandler, UpdateTagHandler } from './commands/tag-command.handlers';
import { TagsController } from './tags.controller';

/** Commit tags (`/commit_tags`). The tag read model lives with the commits it names. */
@Module({ imports: [CommitsModule], controllers: [TagsController], providers: [CreateTagHandler, UpdateTagHandler, DeleteTagHandler] })
export class TagsModule {}
