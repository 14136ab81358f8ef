import { type DynamicModule, Global, Module } from '@nestjs/common';
import { AggregateRepository, ARBOR_CONFIG, DataDiskFloor, Identity, type Infrastructure, Operations, OrgQuotas, ProjectionWaiter, Secrets, TagHolds, VmSshKeys } from '@arbor/application';
import { EVENT_STORE } from '@arbor/event-store';
import { READ_MODEL_STORE } from '@arbor/read-models';

/**
 * Hands the already-opened stores to Nest (the process that opened them owns their lifetime), with
 * what every handler runs commands through: the aggregate repository (sealing and opening secrets
 * with the key store), Operations, TagHolds and Identity; the VMs' SSH keys; and the bounds new
 * work must pass (the org's quotas, the data disk's floor).
 */
@Global()
@Module({})
export class InfrastructureModule {
  static forRoot(infra: Infrastructure): DynamicModule {
    const aggregates = new AggregateRepository(infra.eventStore, infra.secrets.events);
    const projection = new ProjectionWaiter(infra.readModels, infra.config.waitTimeoutMs);
    const operations = new Operations(aggregates, projection, infra.config.waitTimeoutMs);
    return {
      module: InfrastructureModule,
      providers: [
        { provide: ARBOR_CONFIG, useValue: infra.config },
        { provide: EVENT_STORE, useValue: infra.eventStore },
        { provide: READ_MODEL_STORE, useValue: infra.readModels },
        { provide: ProjectionWaiter, useValue: projection },
        { provide: AggregateRepository, useValue: aggregates },
        { provide: Operations, useValue: operations },
        { provide: TagHolds, useValue: new TagHolds(aggregates) },
        { provide: Identity, useValue: new Identity(operations, aggregates, infra.readModels) },
        { provide: Secrets, useValue: infra.secrets },
        { provide: VmSshKeys, useValue: infra.secrets.vmSshKeys },
        { provide: OrgQuotas, useValue: new OrgQuotas(aggregates, infra.config.resources.limits) },
        { provide: DataDiskFloor, useValue: new DataDiskFloor(infra.config.dataDir, infra.config.resources.dataDiskFloorMib) },
      ],
      exports: [ARBOR_CONFIG, EVENT_STORE, READ_MODEL_STORE, ProjectionWaiter, AggregateRepository, Operations, TagHolds, Identity, Secrets, VmSshKeys, OrgQuotas, DataDiskFloor],
    };
  }
}
