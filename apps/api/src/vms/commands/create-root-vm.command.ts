import { Command } from '@nestjs/cqrs';
import type { VmCreateVmConfigDto } from '@arbor/contracts';
import type { RequestContext } from '../../auth/request-context.decorator';

/** POST /vm/new_root: a fresh VM from a base image. Returns the new VM's id. */
export class CreateRootVmCommand extends Command<{ vm_id: string }> {
  constructor(
    readonly context: RequestContext,
    readonly config: VmCreateVmConfigDto,
    readonly waitBoot: boolean,
  ) {
    super();
  }
}
