import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { CreateDomainRequestDto, DeleteDomainResponseDto, DomainResponseDto, ListDomainsQueryDto } from '@arbor/contracts';
import { AnyMember, Changes } from '../auth/changes.decorator';
import { Ctx, type RequestContext } from '../auth/request-context.decorator';
import { UuidParamPipe } from '../http/uuid-param.pipe';
import { AddDomainCommand, RemoveDomainCommand } from './commands/domain-commands';
import { presentDomain } from './domain-presenter';
import { DomainReadModel } from './domain-read-model';

/**
 * Custom domains: host names the edge routes to a VM (plain HTTP by Host header to its port 80,
 * TLS by SNI passed through to its port 443). A name is unique across the installation; another
 * org's domain answers 404.
 */
@ApiTags('domains')
@ApiBearerAuth()
@Controller('api/v1/domains')
export class DomainsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly domains: DomainReadModel,
  ) {}

  @Get()
  @ApiOkResponse({ type: [DomainResponseDto], description: 'A bare array, oldest first' })
  async list(@Ctx() ctx: RequestContext, @Query() query: ListDomainsQueryDto): Promise<DomainResponseDto[]> {
    return (await this.domains.list(ctx.principal.org_id, query.vm_id?.toLowerCase())).map(presentDomain);
  }

  @AnyMember('adds a domain of the caller\'s own; it routes traffic to a VM of the org and changes nothing in it')
  @Post()
  @HttpCode(201)
  @ApiCreatedResponse({
    type: DomainResponseDto,
    description: '400 for a name that is not a host name (RFC 1123) or sits under the VMs\' own names; 404 for a VM missing or of another org; 409 for a name in use (by anyone) or a VM being deleted',
  })
  create(@Ctx() ctx: RequestContext, @Body() body: CreateDomainRequestDto): Promise<DomainResponseDto> {
    return this.commands.execute(new AddDomainCommand(ctx, body.vm_id.toLowerCase(), body.domain));
  }

  @Get(':domain_id')
  @ApiOkResponse({ type: DomainResponseDto })
  async get(@Ctx() ctx: RequestContext, @Param('domain_id', UuidParamPipe) domainId: string): Promise<DomainResponseDto> {
    return presentDomain(await this.domains.get(ctx.principal.org_id, domainId));
  }

  @Changes('domain')
  @Delete(':domain_id')
  @HttpCode(200)
  @ApiOkResponse({ type: DeleteDomainResponseDto, description: 'The name is no longer routed and is free again' })
  delete(@Ctx() ctx: RequestContext, @Param('domain_id', UuidParamPipe) domainId: string): Promise<DeleteDomainResponseDto> {
    return this.commands.execute(new RemoveDomainCommand(ctx, domainId));
  }
}
