import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { CommitInfoDto, ListCommitsResponseDto, PaginationQueryDto, UpdateCommitRequestDto, VmCommitEntityDto } from '@arbor/contracts';
import { Changes } from '../auth/changes.decorator';
import { Ctx, type RequestContext } from '../auth/request-context.decorator';
import { UuidParamPipe } from '../http/uuid-param.pipe';
import { ApiAsOfQuery, type AsOf, AsOfPipe } from '../time-travel/as-of';
import type { Page } from './commit-read-model';
import { DeleteCommitCommand, UpdateCommitCommand } from './commands/update-commit.command';
import { GetCommitParentsQuery, ListCommitsQuery } from './queries/commit-queries';

/** limit defaults to 50 and is clamped to 1..100; offset defaults to 0. */
const page = (query: PaginationQueryDto): Page => ({ limit: Math.min(100, Math.max(1, query.limit ?? 50)), offset: query.offset ?? 0 });

@ApiTags('commits')
@ApiBearerAuth()
@Controller('api/v1')
export class CommitsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @Get('commits')
  @ApiOkResponse({ type: ListCommitsResponseDto })
  @ApiAsOfQuery()
  list(@Ctx() ctx: RequestContext, @Query() query: PaginationQueryDto, @Query('as_of', AsOfPipe) asOf?: AsOf): Promise<ListCommitsResponseDto> {
    return this.queries.execute(new ListCommitsQuery({ org_id: ctx.principal.org_id }, page(query), asOf));
  }

  @Get('commits/public')
  @ApiOkResponse({ type: ListCommitsResponseDto })
  @ApiAsOfQuery()
  listPublic(@Query() query: PaginationQueryDto, @Query('as_of', AsOfPipe) asOf?: AsOf): Promise<ListCommitsResponseDto> {
    return this.queries.execute(new ListCommitsQuery('public', page(query), asOf));
  }

  @Changes('commit')
  @Patch('commits/:commit_id')
  @ApiOkResponse({ type: CommitInfoDto })
  update(@Ctx() ctx: RequestContext, @Param('commit_id', UuidParamPipe) commitId: string, @Body() body: UpdateCommitRequestDto): Promise<CommitInfoDto> {
    return this.commands.execute(new UpdateCommitCommand(ctx, commitId, body.is_public, body.name, body.description));
  }

  @Changes('commit')
  @Delete('commits/:commit_id')
  @HttpCode(204)
  @ApiNoContentResponse({ description: '409 while VMs started from the commit still exist' })
  async delete(@Ctx() ctx: RequestContext, @Param('commit_id', UuidParamPipe) commitId: string): Promise<void> {
    await this.commands.execute(new DeleteCommitCommand(ctx, commitId));
  }

  @Get('vm/commits/:commit_id/parents')
  @ApiOkResponse({ type: [VmCommitEntityDto], description: 'Element 0 is the commit itself, then its ancestors back to the root' })
  @ApiAsOfQuery()
  parents(@Ctx() ctx: RequestContext, @Param('commit_id', UuidParamPipe) commitId: string, @Query('as_of', AsOfPipe) asOf?: AsOf): Promise<VmCommitEntityDto[]> {
    return this.queries.execute(new GetCommitParentsQuery(ctx.principal.org_id, commitId, asOf));
  }
}
