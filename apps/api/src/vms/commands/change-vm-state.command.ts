import { Command } from '@nestjs/cqrs';
import type { RequestContext } from '../../auth/request-context.decorator';

/** PATCH /vm/{id}/state: pause or resume. Answers once the machine really is in that state. */
export class ChangeVmStateCommand extends Command<void> {
  constructor(
    readonly context: RequestContext,
    readonly vm_id: string,
    readonly target: 'Paused' | 'Running',
    readonly skipWaitBoot: boolean,
  ) {
    super();
  }
}
