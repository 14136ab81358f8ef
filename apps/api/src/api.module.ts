import { type DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR } from '@nestjs/core';
import { CqrsModule } from '@nestjs/cqrs';
import type { Infrastructure } from '@arbor/application';
import { ApiKeyGuard } from './auth/api-key.guard';
import { AuthModule } from './auth/auth.module';
import { ChangeGuard } from './auth/change.guard';
import { EventsModule } from './events/events.module';
import { ErrorFilter } from './http/error.filter';
import { IdempotencyInterceptor } from './http/idempotency.interceptor';
import { InfrastructureModule } from './infrastructure.module';
import { KeysController } from './keys/keys.controller';
import { MetricsModule } from './metrics/metrics.module';
import { SystemController } from './system/system.controller';
import { VmsModule } from './vms/vms.module';
import { CommitsModule } from './commits/commits.module';
import { TagsModule } from './tags/tags.module';
import { ExecModule } from './exec/exec.module';
import { FilesModule } from './files/files.module';
import { RepositoriesModule } from './repositories/repositories.module';
import { SshKeysModule } from './ssh-keys/ssh-keys.module';
import { EnvVarsModule } from './env-vars/env-vars.module';
import { WebhooksModule } from './webhooks/webhooks.module';
import { IdentityModule } from './identity/identity.module';
import { ShellAuthModule } from './shell-auth/shell-auth.module';
import { DomainsModule } from './domains/domains.module';
import { DeployModule } from './deploy/deploy.module';
import { ImagesModule } from './images/images.module';

/** The feature modules of the API, one per resource family. */
const FEATURE_MODULES = [
  VmsModule,
  CommitsModule,
  TagsModule,
  RepositoriesModule,
  EventsModule,
  ExecModule,
  FilesModule,
  SshKeysModule,
  EnvVarsModule,
  WebhooksModule,
  MetricsModule,
  IdentityModule,
  ShellAuthModule,
  DomainsModule,
  DeployModule,
  ImagesModule,
];

@Module({})
export class ApiModule {
  static register(infra: Infrastructure): DynamicModule {
    return {
      module: ApiModule,
      imports: [InfrastructureModule.forRoot(infra), CqrsModule.forRoot(), AuthModule, ...FEATURE_MODULES],
      controllers: [SystemController, KeysController],
      providers: [
        // In this order: who the caller is, then whether their role lets them change what the route names.
        { provide: APP_GUARD, useClass: ApiKeyGuard },
        { provide: APP_GUARD, useClass: ChangeGuard },
        { provide: APP_INTERCEPTOR, useClass: IdempotencyInterceptor },
        { provide: APP_FILTER, useClass: ErrorFilter },
      ],
    };
  }
}
