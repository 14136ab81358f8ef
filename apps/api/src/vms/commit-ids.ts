import { Injectable } from '@nestjs/common';
import { AggregateRepository, stepContext, type CommandContext } from '@arbor/application';
import { Commit, CommitIdReservation, conflict, Vm } from '@arbor/domain';

/**
 * A client-chosen commit id (`POST /vm/{id}/commit {commit_id}`): refused when a commit has it
 * already, else reserved for this VM on `commitid-<id>` (see commitIdDecider), so that of two VMs
 * racing for one id the loser gets 409 before anything is asked of it.
 */
@Injectable()
export class CommitIds {
  constructor(private readonly aggregates: AggregateRepository) {}

  async reserve(commit_id: string, vm_id: string, context: CommandContext): Promise<void> {
    // A retry of this very request (same X-Idempotency-Key) whose commit was asked, and perhaps
    // made, after its first attempt timed out carries on to the first result.
    const retry = await this.aggregates.appended(Vm, vm_id, context.command_id);
    if (!retry && (await this.aggregates.load(Commit, commit_id)).state.status !== 'none') throw conflict(`commit ${commit_id} already exists`);
    await this.aggregates.handle(CommitIdReservation, commit_id, { type: 'ReserveCommitId', commit_id, vm_id }, stepContext(context, 'reserve-commit-id'));
  }
}
