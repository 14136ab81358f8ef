import { Command } from '@nestjs/cqrs';
import type { RequestContext } from '../../auth/request-context.decorator';
import type { CommitSource } from '../../commits/commit-source-resolver';

/** Where a branch starts: a live VM (commit it first), a commit source, or an id that may be either. */
export type BranchSource = { vm_id: string } | { vm_or_commit_id: string } | CommitSource;

/** The branch family: `count` new VMs from one commit. */
export class BranchVmsCommand extends Command<{ vms: { vm_id: string }[]; memory_preserved: boolean }> {
  constructor(
    readonly context: RequestContext,
    readonly source: BranchSource,
    readonly count: number,
    readonly keepPaused: boolean,
    readonly skipWaitBoot: boolean,
  ) {
    super();
  }
}
