import { Injectable } from '@nestjs/common';
import { Operations, type CommandContext } from '@arbor/application';
import { Vm, type RequestVmCommit } from '@arbor/domain';
import { CommitIds } from './commit-ids';
import { VmReadModel } from './vm-read-model';

export interface VmCommitRequest {
  commit_id: string;
  name: string;
  description: string | null;
  keep_paused: boolean;
  /** The client chose the id (it may be anybody's): reserve it for this VM first. */
  chosen_by_client: boolean;
}

/**
 * Commits a VM, for POST /vm/{id}/commit and for a branch of a live VM alike: waits for (or with
 * skip_wait_boot refuses) a booting VM, reserves a client-chosen id, asks for the commit and
 * answers once it exists and the read models show it.
 */
@Injectable()
export class VmCommitter {
  constructor(
    private readonly operations: Operations,
    private readonly vms: VmReadModel,
    private readonly commitIds: CommitIds,
  ) {}

  async commit(org_id: string, vm_id: string, request: VmCommitRequest, skipWaitBoot: boolean, context: CommandContext): Promise<void> {
    await this.vms.waitUntilBooted(org_id, vm_id, skipWaitBoot);
    const { commit_id, name, description, keep_paused } = request;
    // A generated id is this request's own; a chosen one may be anybody's: 409 unless this VM holds it.
    if (request.chosen_by_client) await this.commitIds.reserve(commit_id, vm_id, context);
    const command: RequestVmCommit = { type: 'RequestVmCommit', commit_id, name, description, keep_paused };
    await this.operations.run(Vm, vm_id, command, context);
  }
}
