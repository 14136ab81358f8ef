import { Inject } from '@nestjs/common';
import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { ARBOR_CONFIG, stepContext, type ArborConfig } from '@arbor/application';
import { branchCountExceeded, deterministicUuid, type VmConfig } from '@arbor/domain';
import type { RequestContext } from '../../auth/request-context.decorator';
import { CommitReadModel } from '../../commits/commit-read-model';
import { CommitSourceResolver, type SourceCommit } from '../../commits/commit-source-resolver';
import { describeError } from '../../http/error-status';
import { BranchFailedError } from '../../http/http-error';
import { VmFactory } from '../vm-factory';
import { VmCommitter } from '../vm-committer';
import { VmReadModel } from '../vm-read-model';
import { BranchVmsCommand } from './branch-vms.command';

/**
 * Branching: find (or, for a live VM, take) the commit, then start `count` children from it one
 * after another. Every refusal comes before anything is made: `count` above the limit, the data
 * disk below its floor, the org's quota for all `count` children (reserved at once, before a live
 * VM is committed). A failure after some children exist answers with the contract's hybrid body
 * listing them; children are independent VMs and stay.
 */
@CommandHandler(BranchVmsCommand)
export class BranchVmsHandler implements ICommandHandler<BranchVmsCommand> {
  constructor(
    private readonly vms: VmReadModel,
    private readonly commits: CommitReadModel,
    private readonly resolver: CommitSourceResolver,
    private readonly committer: VmCommitter,
    private readonly factory: VmFactory,
    @Inject(ARBOR_CONFIG) private readonly config: ArborConfig,
  ) {}

  async execute({ context, source, count, keepPaused, skipWaitBoot }: BranchVmsCommand): Promise<{ vms: { vm_id: string }[]; memory_preserved: boolean }> {
    const org_id = context.principal.org_id;
    const children = (config: VmConfig) => Array.from({ length: count }, () => config);
    let from: SourceCommit;
    try {
      const limit = this.config.resources.limits.branch_count;
      if (count > limit) throw branchCountExceeded(limit, count);
      if ('vm_id' in source) {
        from = await this.commitVm(context, source.vm_id, count, keepPaused, skipWaitBoot);
      } else if ('vm_or_commit_id' in source) {
        const vm = await this.vms.find(org_id, source.vm_or_commit_id);
        if (vm && !vm.deleted_at) {
          from = await this.commitVm(context, vm.vm_id, count, keepPaused, skipWaitBoot);
        } else {
          from = { commit: await this.commits.getReadable(org_id, source.vm_or_commit_id), through_public_repository: false };
          await this.factory.reserve(context, children(from.commit.config));
        }
      } else {
        from = await this.resolver.resolve(org_id, source);
        await this.factory.reserve(context, children(from.commit.config));
      }
    } catch (error) {
      // by_vm and by_ref answer lookup failures with the hybrid body too; the others plainly.
      if (!('vm_id' in source) && !('repo' in source)) throw error;
      throw asBranchFailure(error, []);
    }
    const created: { vm_id: string }[] = [];
    const env = await this.factory.envOf(context);
    const vms = children(from.commit.config).map((config) => ({ config, labels: null, source: from, env }));
    try {
      await this.factory.createAll(context, vms, !skipWaitBoot, (vm_id) => created.push({ vm_id }));
    } catch (error) {
      throw asBranchFailure(error, created);
    }
    return { vms: created, memory_preserved: from.commit.includes_memory };
  }

  /**
   * Checks the commit can be taken, reserves the children's share (the VM's shape is theirs),
   * commits the live VM under a commit id derived from this request, then reads the commit back.
   * A commit refused after all (the VM turned busy meanwhile) gives the shares back.
   */
  private async commitVm(context: RequestContext, vm_id: string, count: number, keepPaused: boolean, skipWaitBoot: boolean): Promise<SourceCommit> {
    const org_id = context.principal.org_id;
    const commit_id = deterministicUuid(context.command.command_id, 'branch-commit');
    const commit = { commit_id, name: `branch-${commit_id.slice(0, 8)}`, description: `branch of vm ${vm_id}`, keep_paused: keepPaused, chosen_id: null };
    const step = stepContext(context.command, 'commit');
    const { vm } = await this.committer.check(org_id, vm_id, commit, skipWaitBoot, step);
    await this.factory.reserve(context, Array.from({ length: count }, () => vm.config));
    try {
      await this.committer.commit(org_id, vm_id, commit, skipWaitBoot, step);
    } catch (error) {
      await this.factory.releaseUnrequested(context, count);
      throw error;
    }
    return { commit: await this.commits.getReadableById(org_id, commit_id), through_public_repository: false };
  }
}

/** The hybrid body with the status and message the error has anywhere else (one table, error-status.ts). */
function asBranchFailure(error: unknown, created: { vm_id: string }[]): BranchFailedError {
  const [status, message] = describeError(error);
  return new BranchFailedError(status, message, created, error);
}
