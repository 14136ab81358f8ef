import { type IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import type { VmDto, VmMetadataResponseDto } from '@arbor/contracts';
import { notFound } from '@arbor/domain';
import { CommitNames } from '../../commits/commit-names';
import { ReadModelsAsOf } from '../../time-travel/read-models-as-of';
import { VmReadModel } from '../vm-read-model';
import { presentVm, presentVmMetadata } from '../vm-presenter';
import { GetVmMetadataQuery, GetVmStatusQuery } from './get-vm.query';

@QueryHandler(GetVmStatusQuery)
export class GetVmStatusHandler implements IQueryHandler<GetVmStatusQuery> {
  constructor(
    private readonly vms: VmReadModel,
    private readonly asOf: ReadModelsAsOf,
  ) {}

  execute({ org_id, vm_id, as_of }: GetVmStatusQuery): Promise<VmDto> {
    return this.asOf.read(as_of, this.vms, async (vms) => presentVm(await vms.get(org_id, vm_id)));
  }
}

@QueryHandler(GetVmMetadataQuery)
export class GetVmMetadataHandler implements IQueryHandler<GetVmMetadataQuery> {
  constructor(
    private readonly vms: VmReadModel,
    private readonly asOf: ReadModelsAsOf,
    private readonly names: CommitNames,
  ) {}

  execute({ org_id, vm_id, as_of }: GetVmMetadataQuery): Promise<VmMetadataResponseDto> {
    return this.asOf.read(as_of, this.vms, async (vms) => {
      const vm = await vms.find(org_id, vm_id);
      if (!vm) throw notFound('vm');
      return presentVmMetadata(vm, await this.names.namingFor(org_id, [vm.parent_commit_id]));
    });
  }
}
