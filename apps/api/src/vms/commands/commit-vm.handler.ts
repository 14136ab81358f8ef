import { Inject } from '@nestjs/common';
import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { conflict, deterministicUuid, streams } from '../../../../../libs/domain/src';
import { EVENT_STORE, type EventStore } from '../../../../../libs/event-store/src/event-store.port';
import { VmOperations } from '../vm-operations';
import { VmReadModel } from '../vm-read-model';
import { CommitVmCommand } from './commit-vm.command';

const blankToNull = (value: string | null | undefined) => (value && value.trim() ? value.trim() : null);

@CommandHandler(CommitVmCommand)
export class CommitVmHandler implements ICommandHandler<CommitVmCommand> {
  constructor(
    @Inject(EVENT_STORE) private readonly events: EventStore,
    private readonly operations: VmOperations,
    private readonly vms: VmReadModel,
  ) {}

  async execute({ context, vm_id, request, keepPaused, skipWaitBoot }: CommitVmCommand): Promise<{ commit_id: string }> {
    await this.vms.waitUntilBooted(context.principal.org_id, vm_id, skipWaitBoot);
    const commit_id = request.commit_id?.toLowerCase() ?? deterministicUuid(context.command.command_id, 'commit');
    if (request.commit_id && (await this.events.readStream(streams.commit(commit_id), { max_count: 1 })).length) {
      throw conflict(`commit ${commit_id} already exists`);
    }
    const name = blankToNull(request.name) ?? `commit-${commit_id.slice(0, 8)}`;
    await this.operations.run(
      vm_id,
      { type: 'RequestVmCommit', commit_id, name, description: blankToNull(request.description), keep_paused: keepPaused },
      context.command,
      'VmCommitted',
    );
    return { commit_id };
  }
}
