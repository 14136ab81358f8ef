import { Controller, Get } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { VmDto } from '@arbor/contracts';
import { Ctx, type RequestContext } from '../auth/request-context.decorator';
import { ListVmsQuery } from './queries/list-vms.query';

/** GET /vms and its alias GET /vm (same handler, as the contract says). */
@ApiTags('vms')
@ApiBearerAuth()
@Controller('api/v1')
export class VmsController {
  constructor(private readonly queries: QueryBus) {}

  @Get(['vms', 'vm'])
  @ApiOkResponse({ type: [VmDto] })
  list(@Ctx() ctx: RequestContext): Promise<VmDto[]> {
    return this.queries.execute(new ListVmsQuery(ctx.principal.org_id));
  }
}
