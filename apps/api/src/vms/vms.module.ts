import { Module } from '@nestjs/common';
import { CommitsModule } from '../commits/commits.module';
import { DomainsModule } from '../domains/domains.module';
import { ImagesModule } from '../images/images.module';
import { BaseImages } from './base-images';
import { BranchController } from './branch.controller';
import { BranchVmsHandler } from './commands/branch-vms.handler';
import { ChangeVmStateHandler } from './commands/change-vm-state.handler';
import { CommitVmHandler } from './commands/commit-vm.handler';
import { CreateRootVmHandler } from './commands/create-root-vm.handler';
import { CreateVmFromCommitHandler } from './commands/create-vm-from-commit.handler';
import { DeleteVmHandler } from './commands/delete-vm.handler';
import { ResizeVmDiskHandler } from './commands/resize-vm-disk.handler';
import { SetVmLabelsHandler } from './commands/set-vm-labels.handler';
import { GetVmMetadataHandler, GetVmStatusHandler } from './queries/get-vm.handler';
import { ListVmsHandler } from './queries/list-vms.handler';
import { CommitIds } from './commit-ids';
import { DataDiskGuard } from './data-disk-guard';
import { VmFactory } from './vm-factory';
import { VmCommitter } from './vm-committer';
import { VmReadModel } from './vm-read-model';
import { VmController } from './vm.controller';
import { VmsController } from './vms.controller';

/** VMs: create (new_root, from_commit, branch), list, status, metadata, labels, state, disk, commit, delete. */
@Module({
  imports: [CommitsModule, DomainsModule, ImagesModule],
  controllers: [VmsController, BranchController, VmController],
  providers: [
    BaseImages,
    VmReadModel,
    VmFactory,
    VmCommitter,
    CommitIds,
    DataDiskGuard,
    CreateRootVmHandler,
    CreateVmFromCommitHandler,
    BranchVmsHandler,
    ChangeVmStateHandler,
    CommitVmHandler,
    ResizeVmDiskHandler,
    SetVmLabelsHandler,
    DeleteVmHandler,
    ListVmsHandler,
    GetVmStatusHandler,
    GetVmMetadataHandler,
  ],
  exports: [VmReadModel, DataDiskGuard, VmFactory],
})
export class VmsModule {}
