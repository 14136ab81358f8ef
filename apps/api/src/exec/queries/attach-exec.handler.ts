import { type IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import type { ExecStreamItem } from '../exec-lines';
import { ExecFollower } from '../exec-follower';
import { VmReadModel } from '../../vms/vm-read-model';
import { AttachExecQuery } from './attach-exec.query';

@QueryHandler(AttachExecQuery)
export class AttachExecHandler implements IQueryHandler<AttachExecQuery> {
  constructor(
    private readonly vms: VmReadModel,
    private readonly follower: ExecFollower,
  ) {}

  async execute({ org_id, vm_id, exec_id, after, signal }: AttachExecQuery): Promise<AsyncIterable<ExecStreamItem>> {
    await this.vms.get(org_id, vm_id);
    return this.follower.follow(org_id, vm_id, exec_id, { after, shownExecId: exec_id, signal });
  }
}
