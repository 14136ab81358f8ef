import { Module } from '@nestjs/common';
import { ChangeVmStateHandler } from './commands/change-vm-state.handler';
import { CreateRootVmHandler } from './commands/create-root-vm.handler';
import { DeleteVmHandler } from './commands/delete-vm.handler';
import { SetVmLabelsHandler } from './commands/set-vm-labels.handler';
import { GetVmMetadataHandler, GetVmStatusHandler } from './queries/get-vm.handler';
import { ListVmsHandler } from './queries/list-vms.handler';
import { VmReadModel } from './vm-read-model';
import { VmController } from './vm.controller';
import { VmsController } from './vms.controller';

/** VM lifecycle: create, list, status, metadata, labels, pause/resume, delete. */
@Module({
  controllers: [VmsController, VmController],
  providers: [
    VmReadModel,
    CreateRootVmHandler,
    ChangeVmStateHandler,
    SetVmLabelsHandler,
    DeleteVmHandler,
    ListVmsHandler,
    GetVmStatusHandler,
    GetVmMetadataHandler,
  ],
  exports: [VmReadModel],
})
export class VmsModule {}
