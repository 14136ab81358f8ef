import { type IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { notFound } from '@arbor/domain';
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
    const key = await this.follower.locate(org_id, exec_id);
    if (!key) throw notFound('exec');
    return this.follower.follow(org_id, vm_id, key, { after, shownExecId: exec_id, signal });
  }
}
