import { Command } from '@nestjs/cqrs';
import type { CreateRepositoryResponseDto } from '@arbor/contracts';
import type { RequestContext } from '../../auth/request-context.decorator';

/** POST /repositories: a new, private repository of the caller's org. */
export class CreateRepositoryCommand extends Command<CreateRepositoryResponseDto> {
  constructor(
    readonly context: RequestContext,
    readonly name: string,
    readonly description: string | null,
  ) {
    super();
  }
}

/** PATCH /repositories/{name}/visibility. */
export class SetRepositoryVisibilityCommand extends Command<void> {
  constructor(
    readonly context: RequestContext,
    readonly name: string,
    readonly is_public: boolean,
  ) {
    super();
  }
}

/** DELETE /repositories/{name}: the repository and its tags; its commits stay. */
export class DeleteRepositoryCommand extends Command<void> {
  constructor(
    readonly context: RequestContext,
    readonly name: string,
  ) {
    super();
  }
}
