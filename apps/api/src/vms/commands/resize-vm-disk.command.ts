import { Command } from '@nestjs/cqrs';
import type { RequestContext } from '../../auth/request-context.decorator';

/** PATCH /vm/{id}/disk: grow the root filesystem. Answers once the guest sees the new size. */
export class ResizeVmDiskCommand extends Command<void> {
  constructor(
    readonly context: RequestContext,
    readonly vm_id: string,
    readonly fs_size_mib: number,
    readonly skipWaitBoot: boolean,
  ) {
    super();
  }
}
