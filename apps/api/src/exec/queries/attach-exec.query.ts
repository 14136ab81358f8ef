import { Query } from '@nestjs/cqrs';
import type { ExecStreamItem } from '../exec-lines';

/** POST /vm/{id}/exec/stream/attach: an exec's output from a cursor (exclusive), the whole backlog, or from now on. */
export class AttachExecQuery extends Query<AsyncIterable<ExecStreamItem>> {
  constructor(
    readonly org_id: string,
    readonly vm_id: string,
    readonly exec_id: string,
    readonly after: number | 'latest',
    readonly signal: AbortSignal,
  ) {
    super();
  }
}
