import { Command } from '@nestjs/cqrs';
import type { VmExecRequestDto } from '@arbor/contracts';
import type { RequestContext } from '../../auth/request-context.decorator';
import type { SyncExecAnswer } from '../sync-exec-body';

/**
 * POST /vm/{id}/exec: run a command and wait for its end; the answer (its output read from the
 * log as the body is written) is written by the controller.
 */
export class RunExecCommand extends Command<SyncExecAnswer> {
  constructor(
    readonly context: RequestContext,
    readonly vm_id: string,
    readonly body: VmExecRequestDto,
    /** Aborts when the client goes away: the waiting stops, the exec runs on. */
    readonly signal: AbortSignal,
  ) {
    super();
  }
}
