import { Command } from '@nestjs/cqrs';
import type { CommitInfoDto } from '@arbor/contracts';
import type { RequestContext } from '../../auth/request-context.decorator';

/** PATCH /commits/{id}: visibility, and optionally name and description. */
export class UpdateCommitCommand extends Command<CommitInfoDto> {
  constructor(
    readonly context: RequestContext,
    readonly commit_id: string,
    readonly is_public: boolean,
    readonly name?: string | null,
    readonly description?: string | null,
  ) {
    super();
  }
}

/** DELETE /commits/{id}: refused while live VMs started from it. */
export class DeleteCommitCommand extends Command<void> {
  constructor(
    readonly context: RequestContext,
    readonly commit_id: string,
  ) {
    super();
  }
}
