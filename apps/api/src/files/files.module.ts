import { Module } from '@nestjs/common';
import { VmsModule } from '../vms/vms.module';
import { ReadGuestFileHandler } from './commands/read-guest-file.handler';
import { WriteGuestFileHandler } from './commands/write-guest-file.handler';
import { FilesController } from './files.controller';
import { GuestFileOperations } from './guest-file-operations';

/** Guest files: GET/PUT /vm/{id}/files. */
@Module({
  imports: [VmsModule],
  controllers: [FilesController],
  providers: [GuestFileOperations, ReadGuestFileHandler, WriteGuestFileHandler],
})
export class FilesModule {}
