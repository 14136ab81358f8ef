import { Inject } from '@nestjs/common';
import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { AggregateRepository, ARBOR_CONFIG, type ArborConfig, Operations, vmNameSuffix } from '@arbor/application';
import type { DeleteDomainResponseDto, DomainResponseDto } from '@arbor/contracts';
import { conflict, CustomDomain, deterministicUuid, invalid, notFound, requireHostName, Vm } from '@arbor/domain';
import { presentDomain } from '../domain-presenter';
import { DomainReadModel } from '../domain-read-model';
import { AddDomainCommand, RemoveDomainCommand } from './domain-commands';

@CommandHandler(AddDomainCommand)
export class AddDomainHandler implements ICommandHandler<AddDomainCommand> {
  constructor(
    private readonly aggregates: AggregateRepository,
    private readonly operations: Operations,
    private readonly domains: DomainReadModel,
    @Inject(ARBOR_CONFIG) private readonly config: ArborConfig,
  ) {}

  /**
   * The name first (a bad name is the client's error whatever the VM), then the VM from its own
   * stream, then the name's reservation. A VM deleted meanwhile is caught by the worker, which
   * releases the names of deleted VMs, also those added after the deletion.
   */
  async execute({ context, vm_id, domain }: AddDomainCommand): Promise<DomainResponseDto> {
    const org_id = context.principal.org_id;
    const name = requireHostName(domain);
    const suffix = vmNameSuffix(this.config.edge);
    if (name === suffix.slice(1) || name.endsWith(suffix)) {
      throw invalid(`domain '${name}' is under the VMs' own names (${suffix.slice(1)}): every VM is already reachable as <vm_id>${suffix}`);
    }
    const { state: vm } = await this.aggregates.load(Vm, vm_id);
    if (vm.lifecycle === 'none' || vm.lifecycle === 'deleted' || vm.org_id !== org_id) throw notFound('vm');
    if (vm.lifecycle === 'deleting') throw conflict('vm is being deleted');
    const domain_id = deterministicUuid(context.command.command_id, 'domain');
    await this.operations.run(CustomDomain, name, { type: 'AddDomain', domain_id, domain: name, vm_id, org_id, now: new Date().toISOString() }, context.command);
    return presentDomain(await this.domains.get(org_id, domain_id));
  }
}

@CommandHandler(RemoveDomainCommand)
export class RemoveDomainHandler implements ICommandHandler<RemoveDomainCommand> {
  constructor(
    private readonly operations: Operations,
    private readonly domains: DomainReadModel,
  ) {}

  async execute({ context, domain_id }: RemoveDomainCommand): Promise<DeleteDomainResponseDto> {
    const org_id = context.principal.org_id;
    const { domain } = await this.domains.get(org_id, domain_id);
    await this.operations.run(CustomDomain, domain, { type: 'RemoveDomain', domain_id, org_id, now: new Date().toISOString() }, context.command);
    return { domain_id };
  }
}
