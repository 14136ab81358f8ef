import { Module } from '@nestjs/common';
import { AddDomainHandler, RemoveDomainHandler } from './commands/domain-command.handlers';
import { DomainReadModel } from './domain-read-model';
import { DomainsController } from './domains.controller';

/** Custom domains (`/domains`): the names the edge routes to VMs. */
@Module({ controllers: [DomainsController], providers: [DomainReadModel, AddDomainHandler, RemoveDomainHandler], exports: [DomainReadModel] })
export class DomainsModule {}
