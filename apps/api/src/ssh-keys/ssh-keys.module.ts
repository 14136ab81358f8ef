import { Module } from '@nestjs/common';
import { VmsModule } from '../vms/vms.module';
import { GetVmSshKeyHandler } from './queries/get-vm-ssh-key.handler';
import { SshKeysController } from './ssh-keys.controller';

/** Per-VM SSH keys: GET /vm/{id}/ssh_key. */
@Module({
  imports: [VmsModule],
  controllers: [SshKeysController],
  providers: [GetVmSshKeyHandler],
})
export class SshKeysModule {}
