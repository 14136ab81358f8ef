import { type DynamicModule, Global, Module } from '@nestjs/common';
import { ARBOR_CONFIG, type Infrastructure, ProjectionWaiter } from '@arbor/application';
import { EVENT_STORE } from '@arbor/event-store';
import { READ_MODEL_STORE } from '@arbor/read-models';

/** Hands the already-opened stores to Nest (the process that opened them owns their lifetime). */
@Global()
@Module({})
export class InfrastructureModule {
  static forRoot(infra: Infrastructure): DynamicModule {
    return {
      module: InfrastructureModule,
      providers: [
        { provide: ARBOR_CONFIG, useValue: infra.config },
        { provide: EVENT_STORE, useValue: infra.eventStore },
        { provide: READ_MODEL_STORE, useValue: infra.readModels },
        { provide: ProjectionWaiter, useValue: new ProjectionWaiter(infra.readModels, infra.config.waitTimeoutMs) },
      ],
      exports: [ARBOR_CONFIG, EVENT_STORE, READ_MODEL_STORE, ProjectionWaiter],
    };
  }
}
