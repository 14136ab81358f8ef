import { Command } from '@nestjs/cqrs';
import type { VmExecRequestDto } from '@arbor/contracts';
import type { RequestContext } from '../../auth/request-context.decorator';
import type { ExecStreamItem } from '../exec-lines';

/** POST /vm/{id}/exec/stream: start a command and follow its output as NDJSON lines. */
export class StreamExecCommand extends Command<AsyncIterable<ExecStreamItem>> {
  constructor(
    readonly context: RequestContext,
    readonly vm_id: string,
    readonly body: VmExecRequestDto,
    /** Aborts when the client disconnects: the lines stop, the exec runs on. */
    readonly signal: AbortSignal,
  ) {
    super();
  }
}
