import { type DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR } from '@nestjs/core';
import { CqrsModule } from '@nestjs/cqrs';
import type { Infrastructure } from '../../../libs/application/src/infrastructure';
import { ApiKeyAuthenticator } from './auth/api-key-authenticator';
import { ApiKeyGuard } from './auth/api-key.guard';
import { EventsController } from './events/events.controller';
import { ErrorFilter } from './http/error.filter';
import { IdempotencyInterceptor } from './http/idempotency.interceptor';
import { InfrastructureModule } from './infrastructure.module';
import { KeysController } from './keys/keys.controller';
import { SystemController } from './system/system.controller';
import { ChangeVmStateHandler } from './vms/commands/change-vm-state.handler';
import { CreateRootVmHandler } from './vms/commands/create-root-vm.handler';
import { DeleteVmHandler } from './vms/commands/delete-vm.handler';
import { SetVmLabelsHandler } from './vms/commands/set-vm-labels.handler';
import { GetVmMetadataHandler, GetVmStatusHandler } from './vms/queries/get-vm.handler';
import { ListVmsHandler } from './vms/queries/list-vms.handler';
import { VmReadModel } from './vms/vm-read-model';
import { VmController } from './vms/vm.controller';
import { VmsController } from './vms/vms.controller';

@Module({})
export class ApiModule {
  static register(infra: Infrastructure): DynamicModule {
    return {
      module: ApiModule,
      imports: [InfrastructureModule.forRoot(infra), CqrsModule.forRoot()],
      controllers: [SystemController, KeysController, VmsController, VmController, EventsController],
      providers: [
        ApiKeyAuthenticator,
        VmReadModel,
        CreateRootVmHandler,
        ChangeVmStateHandler,
        SetVmLabelsHandler,
        DeleteVmHandler,
        ListVmsHandler,
        GetVmStatusHandler,
        GetVmMetadataHandler,
        { provide: APP_GUARD, useClass: ApiKeyGuard },
        { provide: APP_INTERCEPTOR, useClass: IdempotencyInterceptor },
        { provide: APP_FILTER, useClass: ErrorFilter },
      ],
    };
  }
}
