import { Command } from '@nestjs/cqrs';
import type { VmExecRequestDto, VmExecResponseDto } from '@arbor/contracts';
import type { RequestContext } from '../../auth/request-context.decorator';

/** POST /vm/{id}/exec: run a command and answer with its whole output and exit code. */
export class RunExecCommand extends Command<VmExecResponseDto> {
  constructor(
    readonly context: RequestContext,
    readonly vm_id: string,
    readonly body: VmExecRequestDto,
  ) {
    super();
  }
}
