import { Injectable } from '@nestjs/common';
import { AggregateRepository, stepContext, type CommandContext } from '@arbor/application';
import { Commit, CommitIdReservation, conflict } from '@arbor/domain';

/**
 * A client-chosen commit id (`POST /vm/{id}/commit {commit_id}`): refused when a commit has it
 * already, else reserved for this VM on `commitid-<id>` (see commitIdDecider), so that of two VMs
 * racing for one id the loser gets 409 before anything is asked of it.
 */
@Injectable()
export class CommitIds {
  constructor(private readonly aggregates: AggregateRepository) {}

  /** 409 when a commit has the id, or another VM holds it; appends nothing. */
  async check(commit_id: string, vm_id: string, context: CommandContext): Promise<void> {
    if ((await this.aggregates.load(Commit, commit_id)).state.status !== 'none') throw conflict(`commit ${commit_id} already exists`);
    await this.aggregates.check(CommitIdReservation, commit_id, { type: 'ReserveCommitId', commit_id, vm_id }, stepContext(context, 'reserve-commit-id'));
  }

  /** Reserves the id for the VM (409 as `check` says); true when this call reserved it. */
  async reserve(commit_id: string, vm_id: string, context: CommandContext): Promise<boolean> {
    await this.check(commit_id, vm_id, context);
    const reserved = await this.aggregates.handle(CommitIdReservation, commit_id, { type: 'ReserveCommitId', commit_id, vm_id }, stepContext(context, 'reserve-commit-id'));
    return reserved.events.length > 0;
  }

  /** Gives the id back: the commit it was reserved for was refused after all. */
  async release(commit_id: string, vm_id: string, context: CommandContext): Promise<void> {
    await this.aggregates.handle(CommitIdReservation, commit_id, { type: 'ReleaseCommitId', commit_id, vm_id }, stepContext(context, 'release-commit-id'));
  }
}
