import { Command } from '@nestjs/cqrs';
import type { RequestContext } from '../../auth/request-context.decorator';

/** PATCH /vm/{id}/label: replaces the VM's labels (null clears them). */
export class SetVmLabelsCommand extends Command<void> {
  constructor(
    readonly context: RequestContext,
    readonly vm_id: string,
    readonly labels: Record<string, string> | null,
  ) {
    super();
  }
}
