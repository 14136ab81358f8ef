import { type IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import type { VmDto, VmMetadataResponseDto } from '@arbor/contracts';
import { notFound } from '@arbor/domain';
import { VmReadModel } from '../vm-read-model';
import { presentVm, presentVmMetadata } from '../vm-presenter';
import { GetVmMetadataQuery, GetVmStatusQuery } from './get-vm.query';

@QueryHandler(GetVmStatusQuery)
export class GetVmStatusHandler implements IQueryHandler<GetVmStatusQuery> {
  constructor(private readonly vms: VmReadModel) {}

  async execute({ org_id, vm_id }: GetVmStatusQuery): Promise<VmDto> {
    return presentVm(await this.vms.get(org_id, vm_id));
  }
}

@QueryHandler(GetVmMetadataQuery)
export class GetVmMetadataHandler implements IQueryHandler<GetVmMetadataQuery> {
  constructor(private readonly vms: VmReadModel) {}

  async execute({ org_id, vm_id }: GetVmMetadataQuery): Promise<VmMetadataResponseDto> {
    const vm = await this.vms.find(org_id, vm_id);
    if (!vm) throw notFound('vm');
    return presentVmMetadata(vm);
  }
}
