import { type IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import type { VmDto } from '@arbor/contracts';
import { ReadModelsAsOf } from '../../time-travel/read-models-as-of';
import { VmReadModel } from '../vm-read-model';
import { presentVm } from '../vm-presenter';
import { ListVmsQuery } from './list-vms.query';

@QueryHandler(ListVmsQuery)
export class ListVmsHandler implements IQueryHandler<ListVmsQuery> {
  constructor(
    private readonly vms: VmReadModel,
    private readonly asOf: ReadModelsAsOf,
  ) {}

  execute({ org_id, as_of }: ListVmsQuery): Promise<VmDto[]> {
    return this.asOf.read(as_of, this.vms, async (vms) => (await vms.list(org_id)).map(presentVm));
  }
}
