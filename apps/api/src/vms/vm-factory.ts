import { Injectable } from '@nestjs/common';
import { AggregateRepository, envVarsOf, Operations, OrgQuotas, ProjectionWaiter, stepContext, VmSshKeys } from '@arbor/application';
import { Commit, deterministicUuid, DomainError, Image, Vm, vmAddress, vmShareOf, type VmConfig } from '@arbor/domain';
import type { RequestContext } from '../auth/request-context.decorator';
import type { SourceCommit } from '../commits/commit-source-resolver';
import { DataDiskGuard } from './data-disk-guard';
import { VmReadModel } from './vm-read-model';

export interface NewVm {
  config: VmConfig;
  labels: Record<string, string> | null;
  /** Start from this commit instead of the base image. */
  source?: SourceCommit | null;
  /** Written once into the guest's /etc/environment at boot: the owner's env vars (see envOf). */
  env: Record<string, string>;
  /** A root VM of a built image (BaseImages.resolve): the image it boots. */
  image_id?: string | null;
}

/**
 * Asks for one new VM (new_root, from_commit and every branch child) and waits as the caller
 * wants. The n-th VM of a request gets an id derived from the request's command id, so a retried
 * request (same X-Idempotency-Key) asks for the same VMs and creates none twice. Before the first,
 * `reserve` checks the data disk and takes the org's quota for every VM of the request at once.
 */
@Injectable()
export class VmFactory {
  constructor(
    private readonly aggregates: AggregateRepository,
    private readonly operations: Operations,
    private readonly projection: ProjectionWaiter,
    private readonly sshKeys: VmSshKeys,
    private readonly quotas: OrgQuotas,
    private readonly disk: DataDiskGuard,
    private readonly vms: VmReadModel,
  ) {}

  /**
   * Checks the data disk's floor (507), then reserves the org's quota for the request's VMs (the
   * n-th with `configs[n]`), all or none (403 naming the quota): nothing is appended on a refusal.
   */
  async reserve(context: RequestContext, configs: VmConfig[]): Promise<void> {
    await this.disk.requireRoom();
    const org_id = context.principal.org_id;
    const shares = configs.map((config, index) => vmShareOf(this.vmIdOf(context, index), config));
    const existing = async () => (await this.vms.list(org_id)).map((vm) => vmShareOf(vm.vm_id, vm.config));
    await this.quotas.reserveVms(org_id, shares, existing, stepContext(context.command, 'reserve-vms'));
  }

  /** Gives back the shares of the request's VMs (of the first `count`) it never asked for: it stopped early. */
  async releaseUnrequested(context: RequestContext, count: number): Promise<void> {
    for (let index = 0; index < count; index++) {
      const vm_id = this.vmIdOf(context, index);
      if ((await this.aggregates.load(Vm, vm_id)).state.lifecycle !== 'none') continue;
      await this.quotas.releaseVm(context.principal.org_id, vm_id, stepContext(context.command, 'release-unrequested', String(index)));
    }
  }

  /** Creates the request's reserved VMs one after another; gives back the shares of those it never got to. */
  async createAll(context: RequestContext, vms: NewVm[], waitBoot: boolean, created: (vm_id: string) => void = () => {}): Promise<void> {
    try {
      for (let index = 0; index < vms.length; index++) created(await this.create(context, vms[index], index, waitBoot));
    } catch (error) {
      await this.releaseUnrequested(context, vms.length);
      throw error;
    }
  }

  /** The id of the request's n-th VM (the one `reserve` took the quota for). */
  vmIdOf(context: RequestContext, index: number): string {
    return deterministicUuid(context.command.command_id, 'vm', String(index));
  }

  /** The caller's env vars as they are now: read once per request, so every VM it makes gets the same. */
  envOf(context: RequestContext): Promise<Record<string, string>> {
    return envVarsOf(this.aggregates, context.principal.key_id);
  }

  private async create(context: RequestContext, vm: NewVm, index: number, waitBoot: boolean): Promise<string> {
    const { principal, command } = context;
    const vm_id = this.vmIdOf(context, index);
    const result = await this.aggregates.handle(
      Vm,
      vm_id,
      {
        type: 'RequestVmCreation',
        vm_id,
        org_id: principal.org_id,
        owner_id: principal.key_id,
        config: vm.config,
        labels: vm.labels,
        env: vm.env,
        ip: vmAddress(principal.org_id, vm_id),
        parent_commit_id: vm.source?.commit.commit_id ?? null,
        grandparent_vm_id: vm.source?.commit.parent_vm_id ?? null,
        through_public_repository: vm.source?.through_public_repository || undefined,
        image_id: vm.image_id ?? undefined,
        // The VM's own key pair: its public half is authorized in the guest; GET ssh_key derives the private half.
        ...(await this.sshKeys.forNewVm(vm_id)),
        now: new Date().toISOString(),
      },
      stepContext(command, 'create', String(index)),
    );
    const used = vm.source ? await this.useCommit(context, vm_id, vm.source, index) : vm.image_id ? await this.useImage(context, vm_id, vm.image_id, index) : null;
    // A VM that fails to boot is deleted in the same append as the failure, so that answer (500
    // with the reason) comes once the read models no longer list it.
    if (waitBoot) await this.operations.settle(Vm, vm_id, 'VmCreationRequested', result.revision);
    else await this.projection.waitFor(used ?? result.position);
    return vm_id;
  }

  /**
   * Records on the image's stream that the new VM boots it, with the exact revision read: a
   * concurrent DELETE of the image either comes first (this is refused: 404, the VM ends at once)
   * or sees the use and answers 409. Returns the position to wait for.
   */
  private async useImage(context: RequestContext, vm_id: string, image_id: string, index: number): Promise<number | null> {
    const { principal, command } = context;
    try {
      const used = await this.aggregates.handle(Image, image_id, { type: 'UseImage', vm_id, org_id: principal.org_id, now: new Date().toISOString() }, stepContext(command, 'use-image', String(index)));
      return used.position;
    } catch (error) {
      if (!(error instanceof DomainError && error.kind === 'not_found')) throw error;
      await this.abandon(context, vm_id, index, `image ${image_id} not found`);
      throw error;
    }
  }

  /** A VM that can never boot (its commit or image went meanwhile): ended now, its share given back. */
  private async abandon(context: RequestContext, vm_id: string, index: number, reason: string): Promise<void> {
    const { principal, command } = context;
    await this.quotas.releaseVm(principal.org_id, vm_id, stepContext(command, 'release-unusable', String(index)));
    const failed = await this.aggregates.handle(Vm, vm_id, { type: 'RecordVmBootFailed', reason, now: new Date().toISOString() }, stepContext(command, 'unusable', String(index)));
    await this.projection.waitFor(failed.position);
  }

  /**
   * Records on the commit's stream that the new VM starts from it, with the exact revision read:
   * a concurrent DELETE /commits either comes first (this is refused) or sees the use and answers
   * 409, so no VM ever starts from a snapshot being freed. Appended after VmCreationRequested, so
   * a use always names a VM the log has (the worker claims it too, and releases it when the VM
   * goes). Returns the position to wait for.
   */
  private async useCommit(context: RequestContext, vm_id: string, source: SourceCommit, index: number): Promise<number | null> {
    const { principal, command } = context;
    const { commit_id } = source.commit;
    try {
      const used = await this.aggregates.handle(
        Commit,
        commit_id,
        { type: 'UseCommit', vm_id, org_id: principal.org_id, through_public_repository: source.through_public_repository, now: new Date().toISOString() },
        stepContext(command, 'use', String(index)),
      );
      return used.position;
    } catch (error) {
      if (!(error instanceof DomainError && error.kind === 'not_found')) throw error;
      // Deleted (or made private) since it was looked up: the worker cannot claim it either, so
      // no machine will ever exist; end the VM now rather than leave it booting, its share given back.
      await this.abandon(context, vm_id, index, `commit ${commit_id} not found`);
      throw error;
    }
  }
}
