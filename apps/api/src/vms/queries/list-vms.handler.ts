import { type IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import type { VmDto } from '@arbor/contracts';
import { VmReadModel } from '../vm-read-model';
import { presentVm } from '../vm-presenter';
import { ListVmsQuery } from './list-vms.query';

@QueryHandler(ListVmsQuery)
export class ListVmsHandler implements IQueryHandler<ListVmsQuery> {
  constructor(private readonly vms: VmReadModel) {}

  async execute({ org_id }: ListVmsQuery): Promise<VmDto[]> {
    return (await this.vms.list(org_id)).map(presentVm);
  }
}
