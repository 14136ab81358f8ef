import { Command } from '@nestjs/cqrs';
import type { RequestContext } from '../../auth/request-context.decorator';

/** DELETE /vm/{id}: answers once the machine is destroyed on its host. */
export class DeleteVmCommand extends Command<{ vm_id: string }> {
  constructor(
    readonly context: RequestContext,
    readonly vm_id: string,
    readonly skipWaitBoot: boolean,
  ) {
    super();
  }
}
