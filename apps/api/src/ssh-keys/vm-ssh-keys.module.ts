import { Module } from '@nestjs/common';
import type { ArborConfig } from '../../../../libs/application/src/arbor-config';
import { ARBOR_CONFIG } from '../../../../libs/application/src/infrastructure';
import { VmSshKeys } from '../../../../libs/application/src/vm-ssh-keys';

/**
 * Provides VmSshKeys (the per-VM key pairs) to whoever needs them: the ssh_key endpoint, and VM
 * creation, which puts `publicKey(vm_id)` into VmCreationRequested. No imports, so no cycles.
 */
@Module({
  providers: [{ provide: VmSshKeys, useFactory: (config: ArborConfig) => VmSshKeys.load(config), inject: [ARBOR_CONFIG] }],
  exports: [VmSshKeys],
})
export class VmSshKeysModule {}
