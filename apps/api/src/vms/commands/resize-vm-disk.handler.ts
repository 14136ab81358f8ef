import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { AggregateRepository, Operations, OrgQuotas, stepContext } from '@arbor/application';
import { Vm, vmShareOf, type RequestVmDiskResize, type VmShare } from '@arbor/domain';
import type { RequestContext } from '../../auth/request-context.decorator';
import { DataDiskGuard } from '../data-disk-guard';
import { VmReadModel } from '../vm-read-model';
import { ResizeVmDiskCommand } from './resize-vm-disk.command';

/**
 * Grows a VM's disk once every rule passed, before anything is appended: the VM can resize now
 * and the size grows (409, 400), the data disk is above its floor (507), the org's disk quota and
 * the per-VM maximum take the new size (403). A resize that fails gives the org its old size back.
 */
@CommandHandler(ResizeVmDiskCommand)
export class ResizeVmDiskHandler implements ICommandHandler<ResizeVmDiskCommand> {
  constructor(
    private readonly aggregates: AggregateRepository,
    private readonly operations: Operations,
    private readonly vms: VmReadModel,
    private readonly quotas: OrgQuotas,
    private readonly disk: DataDiskGuard,
  ) {}

  async execute({ context, vm_id, fs_size_mib, skipWaitBoot }: ResizeVmDiskCommand): Promise<void> {
    const org_id = context.principal.org_id;
    await this.vms.waitUntilBooted(org_id, vm_id, skipWaitBoot);
    const command: RequestVmDiskResize = { type: 'RequestVmDiskResize', fs_size_mib };
    await this.aggregates.check(Vm, vm_id, command, context.command);
    const before = (await this.aggregates.load(Vm, vm_id)).state.config!;
    await this.disk.requireRoom();
    await this.reserve(context, vm_id, { ...before, fs_size_mib }, 'reserve-disk');
    try {
      await this.operations.run(Vm, vm_id, command, context.command);
    } catch (error) {
      // Refused, or failed on the host: the disk kept its size, and the org its share of it.
      const now = (await this.aggregates.load(Vm, vm_id)).state.config;
      if (now && now.fs_size_mib < fs_size_mib) await this.reserve(context, vm_id, now, 'give-back-disk');
      throw error;
    }
  }

  private reserve(context: RequestContext, vm_id: string, config: Omit<VmShare, 'vm_id'>, step: string): Promise<void> {
    const org_id = context.principal.org_id;
    const existing = async () => (await this.vms.list(org_id)).map((doc) => vmShareOf(doc.vm_id, doc.config));
    return this.quotas.reserveVms(org_id, [vmShareOf(vm_id, config)], existing, stepContext(context.command, step));
  }
}
