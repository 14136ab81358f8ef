import { Command } from '@nestjs/cqrs';
import type { RequestContext } from '../../auth/request-context.decorator';

/** PUT /vm/{id}/files: creates or replaces a file in the VM; answers once it is written. */
export class WriteGuestFileCommand extends Command<void> {
  constructor(
    readonly context: RequestContext,
    readonly vm_id: string,
    readonly path: string,
    readonly content: Buffer,
    readonly mode: number,
    readonly create_dirs: boolean,
  ) {
    super();
  }
}
