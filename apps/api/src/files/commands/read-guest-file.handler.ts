import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { VmReadModel } from '../../vms/vm-read-model';
import { GuestFileOperations } from '../guest-file-operations';
import { ReadGuestFileCommand } from './read-guest-file.command';

@CommandHandler(ReadGuestFileCommand)
export class ReadGuestFileHandler implements ICommandHandler<ReadGuestFileCommand> {
  constructor(
    private readonly vms: VmReadModel,
    private readonly files: GuestFileOperations,
  ) {}

  async execute({ context, vm_id, path }: ReadGuestFileCommand): Promise<Buffer> {
    const org_id = context.principal.org_id;
    await this.vms.requireRunning(org_id, vm_id);
    return this.files.read(context.command, { vm_id, org_id, path });
  }
}
