import { Injectable } from '@nestjs/common';
import { AggregateRepository, Operations, OrgQuotas, stepContext, type CommandContext } from '@arbor/application';
import { Vm, type RequestVmCommit } from '@arbor/domain';
import { CommitIds } from './commit-ids';
import { DataDiskGuard } from './data-disk-guard';
import { VmReadModel } from './vm-read-model';

export interface VmCommitRequest {
  /** The commit's id in the log (for a chosen id: `orgCommitId(org, chosen_id)`). */
  commit_id: string;
  /** The id the client chose, the org's name for the commit (null: none chosen): reserved for this VM first. */
  chosen_id: string | null;
  name: string;
  description: string | null;
  keep_paused: boolean;
}

const MIB = 1024 * 1024;

/** The most a commit of a VM can hold: its disk and its memory. */
const mostOf = (config: { fs_size_mib: number; mem_size_mib: number }) => (config.fs_size_mib + config.mem_size_mib) * MIB;

/**
 * Commits a VM, for POST /vm/{id}/commit and for a branch of a live VM alike: waits for (or with
 * skip_wait_boot refuses) a booting VM, then passes every rule before anything is appended: the
 * VM can commit now (409 while another operation runs, and nothing else is written), the data
 * disk is above its floor (507), a client-chosen id is free (409), the org's commit
 * storage has room for the most the commit can take, its VM's disk and memory (403). Then it asks
 * for the commit and answers once it exists and the read models show it. Should the VM turn busy
 * between the check and the ask, what was reserved for the commit is given back.
 */
@Injectable()
export class VmCommitter {
  constructor(
    private readonly aggregates: AggregateRepository,
    private readonly operations: Operations,
    private readonly vms: VmReadModel,
    private readonly commitIds: CommitIds,
    private readonly quotas: OrgQuotas,
    private readonly disk: DataDiskGuard,
  ) {}

  async commit(org_id: string, vm_id: string, request: VmCommitRequest, skipWaitBoot: boolean, context: CommandContext): Promise<void> {
    const { vm, command, retry } = await this.check(org_id, vm_id, request, skipWaitBoot, context);
    const undo: (() => Promise<unknown>)[] = [];
    if (!retry) {
      const { commit_id, chosen_id } = request;
      // A generated id is this request's own; a chosen one may be taken in the org: 409 unless this VM holds it.
      if (chosen_id !== null && (await this.commitIds.reserve(org_id, chosen_id, vm_id, context))) {
        undo.push(() => this.commitIds.release(org_id, chosen_id, vm_id, context));
      }
      try {
        await this.quotas.reserveCommit(org_id, commit_id, mostOf(vm.config), stepContext(context, 'reserve-commit-storage'));
      } catch (error) {
        // Taken meanwhile by a concurrent request of the org.
        await this.undo(undo);
        throw error;
      }
      undo.push(() => this.quotas.releaseCommit(org_id, commit_id, stepContext(context, 'release-commit-storage')));
    }
    try {
      await this.operations.run(Vm, vm_id, command, context);
    } catch (error) {
      // Refused before it was asked for (the VM turned busy meanwhile): nothing of it may stay.
      if (!(await this.aggregates.appended(Vm, vm_id, context.command_id))) await this.undo(undo);
      throw error;
    }
  }

  /**
   * Every refusal the commit can meet, appending nothing: for `commit` and for a branch that must
   * know before it reserves its children. `retry`: this very request (same X-Idempotency-Key)
   * already asked for the commit, which perhaps is made by now: it carries on to the first result.
   */
  async check(org_id: string, vm_id: string, request: VmCommitRequest, skipWaitBoot: boolean, context: CommandContext) {
    const vm = await this.vms.waitUntilBooted(org_id, vm_id, skipWaitBoot);
    const { commit_id, name, description, keep_paused } = request;
    const command: RequestVmCommit = { type: 'RequestVmCommit', commit_id, name, description, keep_paused };
    await this.aggregates.check(Vm, vm_id, command, context);
    const retry = await this.aggregates.appended(Vm, vm_id, context.command_id);
    if (!retry) {
      await this.disk.requireRoom();
      if (request.chosen_id !== null) await this.commitIds.check(org_id, request.chosen_id, vm_id, context);
      await this.quotas.checkCommit(org_id, commit_id, mostOf(vm.config), stepContext(context, 'reserve-commit-storage'));
    }
    return { vm, command, retry };
  }

  private async undo(steps: (() => Promise<unknown>)[]): Promise<void> {
    for (const step of [...steps].reverse()) await step();
  }
}
