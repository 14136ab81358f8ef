import { Query } from '@nestjs/cqrs';
import type { ExecLogStream, VmExecLogResponseDto } from '@arbor/contracts';

/** GET /vm/{id}/logs: a page of the VM's exec output, oldest first. */
export class GetExecLogsQuery extends Query<VmExecLogResponseDto> {
  constructor(
    readonly org_id: string,
    readonly vm_id: string,
    readonly offset: number,
    readonly max_entries: number,
    readonly stream: ExecLogStream | null,
  ) {
    super();
  }
}
