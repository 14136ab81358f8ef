import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { VmReadModel } from '../../vms/vm-read-model';
import { GuestFileOperations } from '../guest-file-operations';
import { WriteGuestFileCommand } from './write-guest-file.command';

@CommandHandler(WriteGuestFileCommand)
export class WriteGuestFileHandler implements ICommandHandler<WriteGuestFileCommand> {
  constructor(
    private readonly vms: VmReadModel,
    private readonly files: GuestFileOperations,
  ) {}

  async execute({ context, vm_id, path, content, mode, create_dirs }: WriteGuestFileCommand): Promise<void> {
    const org_id = context.principal.org_id;
    await this.vms.requireRunning(org_id, vm_id);
    await this.files.write(context.command, { vm_id, org_id, path }, { mode, create_dirs }, content);
  }
}
