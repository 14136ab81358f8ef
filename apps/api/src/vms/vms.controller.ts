import { Controller, Get, Query } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { VmDto } from '@arbor/contracts';
import { Ctx, type RequestContext } from '../auth/request-context.decorator';
import { ApiAsOfQuery, type AsOf, AsOfPipe } from '../time-travel/as-of';
import { ListVmsQuery } from './queries/list-vms.query';

/** GET /vms and its alias GET /vm (same handler, as the contract says). */
@ApiTags('vms')
@ApiBearerAuth()
@Controller('api/v1')
export class VmsController {
  constructor(private readonly queries: QueryBus) {}

  @Get(['vms', 'vm'])
  @ApiOkResponse({ type: [VmDto] })
  @ApiAsOfQuery()
  list(@Ctx() ctx: RequestContext, @Query('as_of', AsOfPipe) asOf?: AsOf): Promise<VmDto[]> {
    return this.queries.execute(new ListVmsQuery(ctx.principal.org_id, asOf));
  }
}
