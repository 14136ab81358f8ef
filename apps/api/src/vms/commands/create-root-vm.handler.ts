import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { VM_CONFIG_DEFAULTS } from '@arbor/domain';
import { BaseImages } from '../base-images';
import { VmFactory } from '../vm-factory';
import { CreateRootVmCommand } from './create-root-vm.command';

@CommandHandler(CreateRootVmCommand)
export class CreateRootVmHandler implements ICommandHandler<CreateRootVmCommand> {
  constructor(
    private readonly factory: VmFactory,
    private readonly baseImages: BaseImages,
  ) {}

  async execute({ context, config, waitBoot }: CreateRootVmCommand): Promise<{ vm_id: string }> {
    const { image_name, image_id } = await this.baseImages.resolve(context.principal.org_id, config.image_name ?? VM_CONFIG_DEFAULTS.image_name);
    const vmConfig = {
      vcpu_count: config.vcpu_count ?? VM_CONFIG_DEFAULTS.vcpu_count,
      mem_size_mib: config.mem_size_mib ?? VM_CONFIG_DEFAULTS.mem_size_mib,
      fs_size_mib: config.fs_size_mib ?? VM_CONFIG_DEFAULTS.fs_size_mib,
      image_name,
      kernel_name: config.kernel_name ?? VM_CONFIG_DEFAULTS.kernel_name,
    };
    await this.factory.reserve(context, [vmConfig]);
    let vm_id = '';
    await this.factory.createAll(context, [{ config: vmConfig, labels: config.labels ?? null, env: await this.factory.envOf(context), image_id }], waitBoot, (id) => (vm_id = id));
    return { vm_id };
  }
}
