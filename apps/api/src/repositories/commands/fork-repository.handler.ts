import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { AggregateRepository, Operations, OrgQuotas, stepContext, VmSshKeys } from '@arbor/application';
import type { ForkRepositoryResponseDto } from '@arbor/contracts';
import { Commit, CommitIdReservation, conflict, deterministicUuid, Fork, notFound, OrgName, Repository, repositoryTag, requireName, vmShareOf } from '@arbor/domain';
import { DataDiskGuard } from '../../vms/data-disk-guard';
import { VmReadModel } from '../../vms/vm-read-model';
import { ForkRepositoryCommand } from './fork-repository.command';

/**
 * Decides what can be decided before any VM starts (the source exists and is public: 404; the
 * target tag is free: 409; the data disk has room: 507; the org's quota takes the fork's VM and
 * the most its commit can hold: 403), then asks for the fork, a saga the worker carries out step by step,
 * and answers once it is done: 201 with the new VM, commit and reference, or the saga's failure.
 * Every id the fork makes derives from this request's command id, so a retry joins the first. The
 * commit id is reserved for the fork's VM before the fork is asked for: the id is in the org's feed
 * from then on, and a client may choose commit ids, so nobody else's commit can take it meanwhile.
 */
@CommandHandler(ForkRepositoryCommand)
export class ForkRepositoryHandler implements ICommandHandler<ForkRepositoryCommand> {
  constructor(
    private readonly aggregates: AggregateRepository,
    private readonly operations: Operations,
    private readonly sshKeys: VmSshKeys,
    private readonly quotas: OrgQuotas,
    private readonly disk: DataDiskGuard,
    private readonly vms: VmReadModel,
  ) {}

  async execute({ context, request }: ForkRepositoryCommand): Promise<ForkRepositoryResponseDto> {
    const { principal, command } = context;
    const repo_name = request.repo_name ?? request.source_repo;
    const tag_name = request.tag_name ?? request.source_tag;
    for (const [field, name] of Object.entries({ source_org: request.source_org, source_repo: request.source_repo, source_tag: request.source_tag, repo_name, tag_name })) {
      requireName(field, name);
    }
    const id = (what: string) => deterministicUuid(command.command_id, 'fork', what);
    const fork_id = id('fork');
    // A retry of this very request goes on waiting for the fork it asked for.
    if (!(await this.aggregates.appended(Fork, fork_id, command.command_id))) {
      const source_org = (await this.aggregates.load(OrgName, request.source_org)).state.org_id;
      const source = source_org === null ? null : (await this.aggregates.load(Repository, { org_id: source_org, name: request.source_repo })).state;
      const sourceTag = source?.is_public ? repositoryTag(source, request.source_tag) : undefined;
      if (!sourceTag) throw notFound('public repository tag');
      const target = (await this.aggregates.load(Repository, { org_id: principal.org_id, name: repo_name })).state;
      if (repositoryTag(target, tag_name)) throw conflict(`tag '${tag_name}' already exists in repository '${repo_name}'`);
      await this.reserve(context, sourceTag.commit_id, id('vm'), id('commit'));
      const reservation = { type: 'ReserveCommitId' as const, commit_id: id('commit'), vm_id: id('vm') };
      await this.aggregates.handle(CommitIdReservation, id('commit'), reservation, stepContext(command, 'reserve-fork-commit-id'));
      const now = new Date().toISOString();
      const key = await this.sshKeys.forNewVm(id('vm'));
      await this.operations.run(
        Fork,
        fork_id,
        {
          type: 'RequestFork',
          fork_id,
          org_id: principal.org_id,
          owner_id: principal.key_id,
          source: { org_id: source_org!, org_name: request.source_org, repo_name: request.source_repo, tag_name: request.source_tag, commit_id: sourceTag.commit_id },
          repo_name,
          tag_name,
          vm_id: id('vm'),
          vm_ssh_public_key: key.ssh_public_key,
          vm_ssh_key_generation: key.ssh_key_generation,
          commit_id: id('commit'),
          repo_id: id('repository'), // the repository's id should the fork make it (one already there keeps its own)
          tag_id: id('tag'),
          now,
        },
        command,
      );
    } else {
      await this.operations.settle(Fork, fork_id, 'ForkRequested', 0);
    }
    const { state } = await this.aggregates.load(Fork, fork_id);
    const { vm_id, commit_id } = state.request!;
    return { vm_id, commit_id, repo_name, tag_name, reference: `${repo_name}:${tag_name}` };
  }

  /** The disk's floor, then the fork's VM (the source commit's shape) and its commit against the org's quota. */
  private async reserve(context: ForkRepositoryCommand['context'], source_commit_id: string, vm_id: string, commit_id: string): Promise<void> {
    await this.disk.requireRoom();
    const { config } = (await this.aggregates.load(Commit, source_commit_id)).state;
    if (!config) return; // gone: the fork fails with 404 before it makes anything
    const org_id = context.principal.org_id;
    const existing = async () => (await this.vms.list(org_id)).map((vm) => vmShareOf(vm.vm_id, vm.config));
    await this.quotas.reserveVms(org_id, [vmShareOf(vm_id, config)], existing, stepContext(context.command, 'reserve-fork-vm'));
    try {
      await this.quotas.reserveCommit(org_id, commit_id, (config.fs_size_mib + config.mem_size_mib) * 1024 * 1024, stepContext(context.command, 'reserve-fork-commit'));
    } catch (error) {
      await this.quotas.releaseVm(org_id, vm_id, stepContext(context.command, 'release-fork-vm'));
      throw error;
    }
  }
}
