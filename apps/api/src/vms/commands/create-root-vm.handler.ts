import { Inject } from '@nestjs/common';
import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { createHash } from 'node:crypto';
import { deterministicUuid, streams, VM_CONFIG_DEFAULTS, vmDecider } from '../../../../../libs/domain/src';
import { handleCommand } from '../../../../../libs/application/src/aggregate-repository';
import { ProjectionWaiter } from '../../../../../libs/application/src/projection-waiter';
import { EVENT_STORE, type EventStore } from '../../../../../libs/event-store/src/event-store.port';
import { HttpError } from '../../http/http-error';
import { VmReadModel } from '../vm-read-model';
import { CreateRootVmCommand } from './create-root-vm.command';

@CommandHandler(CreateRootVmCommand)
export class CreateRootVmHandler implements ICommandHandler<CreateRootVmCommand> {
  constructor(
    @Inject(EVENT_STORE) private readonly events: EventStore,
    private readonly projection: ProjectionWaiter,
    private readonly vms: VmReadModel,
  ) {}

  async execute({ context, config, waitBoot }: CreateRootVmCommand): Promise<{ vm_id: string }> {
    const { principal, command } = context;
    // With an idempotency key the VM id is the same on every retry, so a retry cannot make a second VM.
    const vm_id = deterministicUuid(command.command_id, 'vm');
    const result = await handleCommand(
      this.events,
      streams.vm(vm_id),
      vmDecider,
      {
        type: 'RequestVmCreation',
        vm_id,
        org_id: principal.org_id,
        owner_id: principal.key_id,
        config: {
          vcpu_count: config.vcpu_count ?? VM_CONFIG_DEFAULTS.vcpu_count,
          mem_size_mib: config.mem_size_mib ?? VM_CONFIG_DEFAULTS.mem_size_mib,
          fs_size_mib: config.fs_size_mib ?? VM_CONFIG_DEFAULTS.fs_size_mib,
          image_name: config.image_name ?? VM_CONFIG_DEFAULTS.image_name,
          kernel_name: config.kernel_name ?? VM_CONFIG_DEFAULTS.kernel_name,
        },
        labels: config.labels ?? null,
        env: {},
        ip: vmAddress(principal.org_id, vm_id),
        now: new Date().toISOString(),
      },
      command,
    );
    await this.projection.waitFor(result.position);
    if (waitBoot) {
      const vm = await this.vms.waitUntilBooted(principal.org_id, vm_id, false);
      if (vm.state === 'dead') throw new HttpError(500, `vm ${vm_id} failed to boot: ${vm.failure_reason ?? 'unknown reason'}`);
    }
    return { vm_id };
  }
}

/** A per-org ULA prefix (fdXX:XXXX:XXXX::/48) and a per-VM interface id, as the contract's IPv6 addresses. */
function vmAddress(org_id: string, vm_id: string): string {
  const org = createHash('sha256').update(org_id).digest('hex');
  const vm = vm_id.replace(/-/g, '');
  const groups = [`fd${org.slice(0, 2)}`, org.slice(2, 6), org.slice(6, 10), '0', vm.slice(16, 20), vm.slice(20, 24), vm.slice(24, 28), vm.slice(28, 32)];
  return groups.map((g) => g.replace(/^0+(?=.)/, '')).join(':');
}
