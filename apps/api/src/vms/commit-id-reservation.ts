import { Inject, Injectable } from '@nestjs/common';
import { commitIdDecider, conflict, deterministicUuid, streams } from '@arbor/domain';
import { commandAppended, handleCommand, type CommandContext } from '@arbor/application';
import { EVENT_STORE, type EventStore } from '@arbor/event-store';

/**
 * A client-chosen commit id (`POST /vm/{id}/commit {commit_id}`): refused when a commit has it
 * already, else reserved for this VM on `commitid-<id>` (see commitIdDecider), so that of two VMs
 * racing for one id the loser gets 409 before anything is asked of it.
 */
@Injectable()
export class CommitIdReservation {
  constructor(@Inject(EVENT_STORE) private readonly events: EventStore) {}

  async reserve(commit_id: string, vm_id: string, context: CommandContext): Promise<void> {
    // A retry of this very request (same X-Idempotency-Key) whose commit was asked, and perhaps
    // made, after its first attempt timed out carries on to the first result.
    const retry = await commandAppended(this.events, streams.vm(vm_id), context.command_id);
    if (!retry && (await this.events.readStream(streams.commit(commit_id), { max_count: 1 })).length) {
      throw conflict(`commit ${commit_id} already exists`);
    }
    const command = { type: 'ReserveCommitId' as const, commit_id, vm_id };
    await handleCommand(this.events, streams.commitIdReservation(commit_id), commitIdDecider, command, {
      ...context,
      command_id: deterministicUuid(context.command_id, 'reserve-commit-id'),
    });
  }
}
