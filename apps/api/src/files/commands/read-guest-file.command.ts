import { Command } from '@nestjs/cqrs';
import type { RequestContext } from '../../auth/request-context.decorator';

/**
 * GET /vm/{id}/files: a command, not a query: reading a guest file is work the worker does on
 * the host, asked for and answered through the log like any other.
 */
export class ReadGuestFileCommand extends Command<Buffer> {
  constructor(
    readonly context: RequestContext,
    readonly vm_id: string,
    readonly path: string,
  ) {
    super();
  }
}
