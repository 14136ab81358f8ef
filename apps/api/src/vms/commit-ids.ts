import { Injectable } from '@nestjs/common';
import { AggregateRepository, stepContext, type CommandContext } from '@arbor/application';
import { Commit, CommitIdReservation, conflict, orgCommitId } from '@arbor/domain';

/**
 * A client-chosen commit id (`POST /vm/{id}/commit {commit_id}`), scoped by org: org O's id X is
 * the commit `orgCommitId(O, X)` in the log. Refused with 409 when X already names a commit for
 * O — its own chosen X, its own commit whose id in the log is X (generated, or chosen before the
 * scoping), or a public commit X any org may read — else reserved for this VM on
 * `commitid-<id in the log>` (see commitIdDecider), so that of two VMs racing for one id the loser
 * gets 409 before anything is asked of it. Another org's private commit, whatever its id, is no
 * concern of O's: its X is free for O, and O learns nothing of it.
 */
@Injectable()
export class CommitIds {
  constructor(private readonly aggregates: AggregateRepository) {}

  /** 409 when the org has a commit named `chosen`, or another VM holds the name; appends nothing. */
  async check(org_id: string, chosen: string, vm_id: string, context: CommandContext): Promise<void> {
    const commit_id = orgCommitId(org_id, chosen);
    if ((await this.aggregates.load(Commit, commit_id)).state.status !== 'none' || (await this.namesACommitAsItIs(org_id, chosen))) {
      throw conflict(`commit ${chosen} already exists`);
    }
    await this.aggregates.check(CommitIdReservation, commit_id, this.reservation(chosen, vm_id), stepContext(context, 'reserve-commit-id'));
  }

  /** Reserves the name for the VM (409 as `check` says); true when this call reserved it. */
  async reserve(org_id: string, chosen: string, vm_id: string, context: CommandContext): Promise<boolean> {
    await this.check(org_id, chosen, vm_id, context);
    const reserved = await this.aggregates.handle(CommitIdReservation, orgCommitId(org_id, chosen), this.reservation(chosen, vm_id), stepContext(context, 'reserve-commit-id'));
    return reserved.events.length > 0;
  }

  /** Gives the name back: the commit it was reserved for was refused after all. */
  async release(org_id: string, chosen: string, vm_id: string, context: CommandContext): Promise<void> {
    const command = { type: 'ReleaseCommitId' as const, commit_id: chosen, vm_id };
    await this.aggregates.handle(CommitIdReservation, orgCommitId(org_id, chosen), command, stepContext(context, 'release-commit-id'));
  }

  private reservation(chosen: string, vm_id: string) {
    return { type: 'ReserveCommitId' as const, commit_id: chosen, vm_id };
  }

  /**
   * A commit whose id in the log is `chosen` that the org names so already: its own, a live public
   * one, or one of its own still to be taken under that id (a fork reserves its commit's id in the
   * log when it is asked for, and shows it in the org's feed from then on).
   */
  private async namesACommitAsItIs(org_id: string, chosen: string): Promise<boolean> {
    const { state } = await this.aggregates.load(Commit, chosen);
    if (state.status !== 'none') return state.org_id === org_id || (state.status === 'created' && state.is_public);
    const reservation = await this.aggregates.load(CommitIdReservation, chosen);
    const reserved = reservation.recorded.findLast((event) => event.type === 'CommitIdReserved');
    return reservation.state.vm_id !== null && reserved?.metadata.org_id === org_id;
  }
}
