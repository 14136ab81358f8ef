import { type DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { CqrsModule } from '@nestjs/cqrs';
import type { Infrastructure } from '@arbor/application';
import { ApiKeyGuard } from './auth/api-key.guard';
import { AuthModule } from './auth/auth.module';
import { EventsModule } from './events/events.module';
import { ErrorFilter } from './http/error.filter';
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
        // Who the caller is, on every route; whether their role lets them change what a route names,
        // and the idempotency of writes, on the write routes (see changes.decorator.ts): a route's
        // guards run after the global ones.
        { provide: APP_GUARD, useClass: ApiKeyGuard },
        { provide: APP_FILTER, useClass: ErrorFilter },
      ],
    };
  }
}
