import { Body, Controller, Get, Inject, Param, Post, Query, Res } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOkResponse, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import {
  VmExecLogResponseDto,
  VmExecLogsQueryDto,
  VmExecRequestDto,
  VmExecResponseDto,
  VmExecStreamAttachRequestDto,
} from '@arbor/contracts';
import { EVENT_STORE, type EventStore } from '@arbor/event-store';
import { AnyMember, Changes } from '../auth/changes.decorator';
import { Ctx, type RequestContext } from '../auth/request-context.decorator';
import { ownResponse } from '../http/own-response';
import { UuidParamPipe } from '../http/uuid-param.pipe';
import { RunExecCommand } from './commands/run-exec.command';
import { StreamExecCommand } from './commands/stream-exec.command';
import { clientGone, sendNdjson } from './ndjson-response';
import { AttachExecQuery } from './queries/attach-exec.query';
import { GetExecLogsQuery } from './queries/get-exec-logs.query';
import { writeSyncExecBody } from './sync-exec-body';

const DEFAULT_LOG_ENTRIES = 100;
const MAX_LOG_ENTRIES = 1000;
const NDJSON_DESCRIPTION =
  'NDJSON (application/x-ndjson), one line per output chunk as it is produced: ' +
  '{"type":"chunk","exec_id","cursor","stream","data_b64"}, then {"type":"exit","exec_id","cursor","exit_code"}. ' +
  'A command that fails after it started ends with {"type":"error","code":"exec_failed","message"}; one lost with its worker ' +
  '(restarted while it ran; not run again) with {"type":"error","code":"exec_lost","message"}. Output past the limit is cut off ' +
  'with a note on stderr, and the exit code is 137.';

/** `/api/v1/vm/{id}/exec…` and `/logs`: commands run in the VM, their output through the log. */
@ApiTags('vm')
@ApiBearerAuth()
@Controller('api/v1/vm')
export class ExecController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
    @Inject(EVENT_STORE) private readonly events: EventStore,
  ) {}

  @Changes('vm')
  @Post(':vm_id/exec')
  @ApiOkResponse({
    type: VmExecResponseDto,
    description:
      'A non-zero exit code is still a 200. Output past the limit (ARBOR_EXEC_OUTPUT_MAX_BYTES) is cut off with a note on stderr, exit code 137. ' +
      'An exec lost with its worker (restarted while it ran; not run again) answers what was recorded, exit code -1, a note on stderr and its exec_id.',
  })
  async exec(@Ctx() ctx: RequestContext, @Param('vm_id', UuidParamPipe) vmId: string, @Body() body: VmExecRequestDto, @Res() reply: FastifyReply): Promise<void> {
    const response = ownResponse(reply);
    const gone = clientGone(response);
    const answer = await this.commands.execute(new RunExecCommand(ctx, vmId, body, gone));
    await writeSyncExecBody(response, this.events, answer, gone);
  }

  @Changes('vm')
  @Post(':vm_id/exec/stream')
  @ApiProduces('application/x-ndjson')
  @ApiOkResponse({ description: `${NDJSON_DESCRIPTION} exec_id is null unless the request named the exec. The command runs on if the client disconnects; name it (exec_id) to attach later.` })
  async stream(@Ctx() ctx: RequestContext, @Param('vm_id', UuidParamPipe) vmId: string, @Body() body: VmExecRequestDto, @Res() reply: FastifyReply): Promise<void> {
    const response = ownResponse(reply);
    const items = await this.commands.execute(new StreamExecCommand(ctx, vmId, body, clientGone(response)));
    await sendNdjson(response, items);
  }

  @AnyMember('reads the output of an exec, as GET logs does')
  @Post(':vm_id/exec/stream/attach')
  @ApiProduces('application/x-ndjson')
  @ApiOkResponse({ description: `${NDJSON_DESCRIPTION} Replays the retained output (after \`cursor\`, exclusive), then follows it live. Unknown exec: 404.` })
  async attach(
    @Ctx() ctx: RequestContext,
    @Param('vm_id', UuidParamPipe) vmId: string,
    @Body() body: VmExecStreamAttachRequestDto,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const response = ownResponse(reply);
    const after = body.from_latest ? 'latest' : (body.cursor ?? 0);
    const items = await this.queries.execute(new AttachExecQuery(ctx.principal.org_id, vmId, body.exec_id.toLowerCase(), after, clientGone(response)));
    await sendNdjson(response, items);
  }

  @Get(':vm_id/logs')
  @ApiOkResponse({
    type: VmExecLogResponseDto,
    description: '`offset` is an opaque, monotonically increasing entry offset (not a byte offset): pass `next_offset` back to continue.',
  })
  logs(@Ctx() ctx: RequestContext, @Param('vm_id', UuidParamPipe) vmId: string, @Query() query: VmExecLogsQueryDto): Promise<VmExecLogResponseDto> {
    const maxEntries = Math.min(query.max_entries ?? DEFAULT_LOG_ENTRIES, MAX_LOG_ENTRIES);
    return this.queries.execute(new GetExecLogsQuery(ctx.principal.org_id, vmId, query.offset ?? 0, maxEntries, query.stream ?? null));
  }
}
