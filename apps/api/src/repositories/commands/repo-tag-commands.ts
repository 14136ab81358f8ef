import { Command } from '@nestjs/cqrs';
import type { CreateRepoTagResponseDto } from '@arbor/contracts';
import type { RequestContext } from '../../auth/request-context.decorator';

/** POST /repositories/{name}/tags. */
export class CreateRepoTagCommand extends Command<CreateRepoTagResponseDto> {
  constructor(
    readonly context: RequestContext,
    readonly repo_name: string,
    readonly tag_name: string,
    readonly commit_id: string,
    readonly description: string | null,
  ) {
    super();
  }
}

/** PATCH /repositories/{name}/tags/{tag}: `description` undefined leaves it, null clears it. */
export class UpdateRepoTagCommand extends Command<void> {
  constructor(
    readonly context: RequestContext,
    readonly repo_name: string,
    readonly tag_name: string,
    readonly commit_id: string | null | undefined,
    readonly description: string | null | undefined,
  ) {
    super();
  }
}

/** DELETE /repositories/{name}/tags/{tag}. */
export class DeleteRepoTagCommand extends Command<void> {
  constructor(
    readonly context: RequestContext,
    readonly repo_name: string,
    readonly tag_name: string,
  ) {
    super();
  }
}
