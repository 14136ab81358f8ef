import { Module } from '@nestjs/common';
import { type ArborConfig, ARBOR_CONFIG, VmSshKeys } from '@arbor/application';

/**
 * Provides VmSshKeys (the per-VM key pairs) to whoever needs them: the ssh_key endpoint, and VM
 * creation, which puts `publicKey(vm_id)` into VmCreationRequested. No imports, so no cycles.
 */
@Module({
  providers: [{ provide: VmSshKeys, useFactory: (config: ArborConfig) => VmSshKeys.load(config), inject: [ARBOR_CONFIG] }],
  exports: [VmSshKeys],
})
export class VmSshKeysModule {}
