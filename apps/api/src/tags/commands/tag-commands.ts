import { Command } from '@nestjs/cqrs';
import type { CreateCommitTagResponseDto } from '@arbor/contracts';
import type { RequestContext } from '../../auth/request-context.decorator';

export class CreateTagCommand extends Command<CreateCommitTagResponseDto> {
  constructor(
    readonly context: RequestContext,
    readonly tag_name: string,
    readonly commit_id: string,
    readonly description: string | null,
  ) {
    super();
  }
}

/** `description`: undefined leaves it, null clears it, a string sets it. */
export class UpdateTagCommand extends Command<void> {
  constructor(
    readonly context: RequestContext,
    readonly tag_name: string,
    readonly commit_id: string | null | undefined,
    readonly description: string | null | undefined,
  ) {
    super();
  }
}

export class DeleteTagCommand extends Command<void> {
  constructor(
    readonly context: RequestContext,
    readonly tag_name: string,
  ) {
    super();
  }
}
