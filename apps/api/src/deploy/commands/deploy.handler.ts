import { Inject } from '@nestjs/common';
import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { AggregateRepository, ARBOR_CONFIG, type ArborConfig, ProjectionWaiter, requestProjectVm, resolveRemoteBranch, stepContext, VmSshKeys } from '@arbor/application';
import type { DeployResponseDto } from '@arbor/contracts';
import {
  conflict,
  deterministicUuid,
  Project,
  projectDirectory,
  ProjectName,
  requireBranchName,
  requireDeploySettings,
  requireName,
  requireRepositoryRef,
  Vm,
  VM_CONFIG_DEFAULTS,
  type ProjectState,
} from '@arbor/domain';
import type { RequestContext } from '../../auth/request-context.decorator';
import { VmFactory } from '../../vms/vm-factory';
import { DeployCommand } from './deploy.command';

/** A name whose reservation names a project never asked for (its api stopped in between) is free after this long. */
const ABANDONED_RESERVATION_MS = 10 * 60_000;

/**
 * Decides everything that can be decided before anything is made: the request's rules (400), the
 * name free in the org (409), the repository and branch on the git host (`git ls-remote`: 404, and
 * the head the deploy takes), the data disk (507) and the org's quota for the VM (403). Then
 * reserves the name, appends ProjectRequested and asks for the VM (new_root's way), and answers
 * 202 once the VM and the project are readable: the worker clones, copies and runs the steps.
 * Every id derives from the request's command id, so a retry answers the same project.
 */
@CommandHandler(DeployCommand)
export class DeployHandler implements ICommandHandler<DeployCommand> {
  constructor(
    private readonly aggregates: AggregateRepository,
    private readonly projection: ProjectionWaiter,
    private readonly factory: VmFactory,
    private readonly sshKeys: VmSshKeys,
    @Inject(ARBOR_CONFIG) private readonly config: ArborConfig,
  ) {}

  async execute({ context, request }: DeployCommand): Promise<DeployResponseDto> {
    const { principal, command } = context;
    const project_id = deterministicUuid(command.command_id, 'deploy', 'project');
    // A retry of this very request goes on from where the first stopped.
    if (await this.aggregates.appended(Project, project_id, command.command_id)) return this.finish(context, project_id);

    const ref = requireRepositoryRef(request.repo);
    const repo = `${ref.owner}/${ref.repo}`;
    const branch = request.branch === null || request.branch === undefined || request.branch === '' ? null : requireBranchName(request.branch);
    const settings = requireDeploySettings(request.settings);
    const name = requireName('name', request.name ? request.name : ref.repo.slice(0, 64));
    const replaces = await this.holderGone(principal.org_id, name);
    const remote = await resolveRemoteBranch(this.config.deploy.git, repo, branch, this.config.deploy.lsRemoteTimeoutMs);

    const vm_config = VM_CONFIG_DEFAULTS;
    await this.factory.reserve(context, [vm_config]);
    const vm_id = this.factory.vmIdOf(context, 0);
    try {
      const now = new Date().toISOString();
      await this.aggregates.handle(ProjectName, { org_id: principal.org_id, name }, { type: 'ReserveProjectName', org_id: principal.org_id, name, project_id, replaces, now }, stepContext(command, 'project-name'));
      const directory = projectDirectory(ref);
      const key = await this.sshKeys.forNewVm(vm_id);
      await this.aggregates.handle(
        Project,
        project_id,
        {
          type: 'RequestProject',
          project_id,
          org_id: principal.org_id,
          owner_id: principal.key_id,
          name,
          repo,
          git_base_url: this.config.deploy.git.baseUrl,
          branch: remote.branch,
          commit_sha: remote.commit_sha,
          settings,
          directory,
          working_dir: settings.working_directory ? `${directory}/${settings.working_directory}` : directory,
          vm_id,
          vm_config,
          vm_ssh_public_key: key.ssh_public_key,
          vm_ssh_key_generation: key.ssh_key_generation,
          now,
        },
        command,
      );
    } catch (error) {
      await this.factory.releaseUnrequested(context, 1);
      throw error;
    }
    return this.finish(context, project_id);
  }

  /** Asks for the project's VM (again, on a retry: one VM whoever asks) and answers once both are readable. */
  private async finish(context: RequestContext, project_id: string): Promise<DeployResponseDto> {
    const { state, recorded } = await this.aggregates.load(Project, project_id);
    const project = state.request!;
    const intent = { event_id: recorded[0].id, correlation_id: recorded[0].metadata.correlation_id };
    const asked = await requestProjectVm(this.aggregates, project, intent, await this.factory.envOf(context));
    await this.projection.waitFor(Math.max(asked.position ?? 0, recorded[recorded.length - 1].position));
    return { project_id, vm_id: project.vm_id, status: statusOf(state) };
  }

  /**
   * Whether the name is free in the org: null when nobody holds it, the holder's id when that
   * project is gone (its VM deleted, or it was never asked for and its reservation is old), else 409.
   */
  private async holderGone(org_id: string, name: string): Promise<string | null> {
    const { state: reservation } = await this.aggregates.load(ProjectName, { org_id, name });
    if (reservation.project_id === null) return null;
    const taken = conflict(`project '${name}' already exists`);
    const holder = (await this.aggregates.load(Project, reservation.project_id)).state;
    if (holder.status === 'none') {
      if (Date.now() - Date.parse(reservation.reserved_at!) > ABANDONED_RESERVATION_MS) return reservation.project_id;
      throw taken;
    }
    const vm = (await this.aggregates.load(Vm, holder.request!.vm_id)).state;
    if (vm.lifecycle === 'deleted') return reservation.project_id;
    throw taken;
  }
}

const statusOf = (state: ProjectState): string => (state.status === 'none' ? 'cloning' : state.status);
