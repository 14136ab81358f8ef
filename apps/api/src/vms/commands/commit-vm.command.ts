import { Command } from '@nestjs/cqrs';
import type { RequestContext } from '../../auth/request-context.decorator';

/** POST /vm/{id}/commit: capture the VM into a new commit. Answers once the commit exists. */
export class CommitVmCommand extends Command<{ commit_id: string }> {
  constructor(
    readonly context: RequestContext,
    readonly vm_id: string,
    readonly request: { commit_id?: string | null; name?: string | null; description?: string | null },
    readonly keepPaused: boolean,
    readonly skipWaitBoot: boolean,
  ) {
    super();
  }
}
