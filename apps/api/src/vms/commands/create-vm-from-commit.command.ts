import { Command } from '@nestjs/cqrs';
import type { RequestContext } from '../../auth/request-context.decorator';
import type { CommitSource } from '../../commits/commit-source-resolver';

/** POST /vm/from_commit: one VM from a commit, a tag or a repository reference. */
export class CreateVmFromCommitCommand extends Command<{ vm_id: string }> {
  constructor(
    readonly context: RequestContext,
    readonly source: CommitSource,
  ) {
    super();
  }
}
