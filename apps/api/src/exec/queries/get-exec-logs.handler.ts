import { Inject } from '@nestjs/common';
import { type IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import type { VmExecLogResponseDto } from '@arbor/contracts';
import { READ_MODEL_STORE, type ReadModelStore, VM_EXEC_LOGS_COLLECTION, type ExecLogEntryDocument } from '@arbor/read-models';
import { VmReadModel } from '../../vms/vm-read-model';
import { GetExecLogsQuery } from './get-exec-logs.query';

@QueryHandler(GetExecLogsQuery)
export class GetExecLogsHandler implements IQueryHandler<GetExecLogsQuery> {
  constructor(
    @Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore,
    private readonly vms: VmReadModel,
  ) {}

  async execute({ org_id, vm_id, offset, max_entries, stream }: GetExecLogsQuery): Promise<VmExecLogResponseDto> {
    await this.vms.get(org_id, vm_id);
    const filter = { vm_id, org_id, offset: { $gte: offset }, ...(stream ? { stream } : {}) };
    // One more than asked for tells whether anything is left after this page.
    const found = await this.readModels.find<ExecLogEntryDocument>(VM_EXEC_LOGS_COLLECTION, filter, { sort: { offset: 1 }, limit: max_entries + 1 });
    const entries = found.slice(0, max_entries);
    return {
      entries: entries.map(({ exec_id, timestamp, stream, data_b64 }) => ({ exec_id, timestamp, stream, data_b64 })),
      next_offset: entries.length ? entries[entries.length - 1].offset + 1 : offset,
      eof: found.length <= max_entries,
    };
  }
}
