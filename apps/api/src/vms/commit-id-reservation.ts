import { Inject, Injectable } from '@nestjs/common';
import { conflict, deterministicUuid, streams } from '../../../../libs/domain/src';
import type { CommandContext } from '../../../../libs/application/src/command-context';
import { toNewEvents } from '../../../../libs/application/src/event-envelope';
import { EVENT_STORE, type EventStore, WrongExpectedVersionError } from '../../../../libs/event-store/src/event-store.port';

interface CommitIdReserved {
  commit_id: string;
  vm_id: string;
}

/**
 * Commit ids are global and a client may choose one (`POST /vm/{id}/commit {commit_id}`). Two
 * requests racing for one id on different VMs would both be asked of the worker, and the loser
 * would fail there after pausing its VM. Instead the id is reserved first, with "no stream", as
 * every unique key in the log is: the first VM asked to commit under the id holds it (its own
 * retries go through), any other VM gets 409 before anything is appended to it.
 */
@Injectable()
export class CommitIdReservation {
  constructor(@Inject(EVENT_STORE) private readonly events: EventStore) {}

  async reserve(commit_id: string, vm_id: string, context: CommandContext): Promise<void> {
    const stream = streams.commitIdReservation(commit_id);
    const data: CommitIdReserved = { commit_id, vm_id };
    const events = toNewEvents([{ type: 'CommitIdReserved', data }], { ...context, command_id: deterministicUuid(context.command_id, 'reserve-commit-id') });
    try {
      await this.events.append(stream, events, 'no_stream');
      return;
    } catch (error) {
      if (!(error instanceof WrongExpectedVersionError)) throw error;
    }
    const [holder] = await this.events.readStream(stream, { max_count: 1 });
    if ((holder.data as CommitIdReserved).vm_id !== vm_id) throw alreadyExists(commit_id);
  }

  /** An id already taken by a commit (whoever made it) is refused before anything else. */
  async refuseExisting(commit_id: string): Promise<void> {
    if ((await this.events.readStream(streams.commit(commit_id), { max_count: 1 })).length) throw alreadyExists(commit_id);
  }
}

const alreadyExists = (commit_id: string) => conflict(`commit ${commit_id} already exists`);
