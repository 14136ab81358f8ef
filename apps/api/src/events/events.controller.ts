import { Controller, Get, Headers, Inject, Param, Query, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiOkResponse, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { ARBOR_CONFIG, type ArborConfig } from '@arbor/application';
import { EventDto, EventExportQueryDto, EventFeedQueryDto, EventFeedResponseDto, EventStreamQueryDto } from '@arbor/contracts';
import { notFound, Vm } from '@arbor/domain';
import { EVENT_STORE, type EventStore } from '@arbor/event-store';
import { Ctx, type RequestContext } from '../auth/request-context.decorator';
import { HttpError } from '../http/http-error';
import { ownResponse } from '../http/own-response';
import { UuidParamPipe } from '../http/uuid-param.pipe';
import { VmReadModel } from '../vms/vm-read-model';
import { exportEvents } from './event-export';
import { eventFilter } from './event-filter';
import { presentEvent } from './event-presenter';
import { streamEvents } from './event-stream';
import { exportRange } from './export-range';
import { OpenStreams } from './open-streams';

const SCAN_BATCH = 500;
/** A page never scans more than this many events of other orgs before answering. */
const SCAN_LIMIT = 20_000;

/**
 * The read-only audit feed: the log itself, by position, as pages, as a live stream (SSE) and as
 * an export (NDJSON). A key sees its org's events; an operator key sees every org's. Internal
 * bookkeeping streams (idempotency records) are left out (see eventFilter).
 */
@ApiTags('events')
@ApiBearerAuth()
@Controller('api/v1')
export class EventsController {
  constructor(
    @Inject(EVENT_STORE) private readonly events: EventStore,
    private readonly vms: VmReadModel,
    private readonly streams: OpenStreams,
    @Inject(ARBOR_CONFIG) private readonly config: ArborConfig,
  ) {}

  @Get('events')
  @ApiOkResponse({ type: EventFeedResponseDto })
  async feed(@Ctx() ctx: RequestContext, @Query() query: EventFeedQueryDto): Promise<EventFeedResponseDto> {
    const limit = query.limit ?? 100;
    const filter = eventFilter(ctx.principal, { type: query.type ? [query.type] : undefined });
    const visible: EventDto[] = [];
    let cursor = query.after ?? -1;
    let scanned = 0;
    let exhausted = false;
    while (visible.length < limit && scanned < SCAN_LIMIT) {
      const batch = await this.events.readAll({ after_position: cursor, max_count: SCAN_BATCH });
      for (const event of batch) {
        cursor = event.position;
        scanned++;
        if (!filter(event)) continue;
        visible.push(presentEvent(event));
        if (visible.length === limit) break;
      }
      if (batch.length < SCAN_BATCH && visible.length < limit) {
        exhausted = true;
        break;
      }
    }
    const has_more = !exhausted || cursor < (await this.events.headPosition());
    return { events: visible, next_after: cursor, has_more };
  }

  @Get('events/stream')
  @ApiProduces('text/event-stream')
  @ApiHeader({ name: 'Last-Event-ID', required: false, description: 'Resume after this log position (what a reconnecting EventSource sends); wins over `after`' })
  @ApiOkResponse({
    description:
      'Server-Sent Events, one message per event: `id:` its log position, `event:` its type, `data:` the same JSON as a feed item. ' +
      'A quiet stream sends a `: heartbeat` comment (every 15 s unless ARBOR_SSE_HEARTBEAT_MS says otherwise), with `id:` when filtered-out events were passed. ' +
      'Same org rule as the feed; filters `type`, `stream`, `category`.',
  })
  async stream(@Ctx() ctx: RequestContext, @Query() query: EventStreamQueryDto, @Headers('last-event-id') lastEventId: string | undefined, @Res() reply: FastifyReply): Promise<void> {
    const response = ownResponse(reply);
    const after = positionOf(lastEventId) ?? query.after ?? -1;
    const filter = eventFilter(ctx.principal, query);
    await streamEvents(this.events, response, { after, filter, heartbeatMs: this.config.sseHeartbeatMs, signal: this.streams.start(response) });
  }

  @Get('events/export')
  @ApiProduces('application/x-ndjson')
  @ApiOkResponse({
    description:
      'NDJSON, one feed item per line in log order, for `after < position <= until` (until: the head of the log when the export starts) ' +
      'and, when given, `since <= created_at < before`. Streamed; the header Arbor-Export-Until tells where it ended. Same org rule and filters as the stream.',
  })
  async export(@Ctx() ctx: RequestContext, @Query() query: EventExportQueryDto, @Res() reply: FastifyReply): Promise<void> {
    const response = ownResponse(reply);
    const range = await exportRange(this.events, query);
    await exportEvents(this.events, response, range, eventFilter(ctx.principal, query), this.streams.start(response));
  }

  @Get('vm/:vm_id/events')
  @ApiOkResponse({ type: [EventDto] })
  async vmEvents(@Ctx() ctx: RequestContext, @Param('vm_id', UuidParamPipe) vmId: string): Promise<EventDto[]> {
    if (!(await this.vms.find(ctx.principal.org_id, vmId))) throw notFound('vm');
    return (await this.events.readStream(Vm.stream(vmId))).map(presentEvent);
  }
}

/** A Last-Event-ID header as a log position (absent or empty: none); anything else is a 400. */
function positionOf(lastEventId: string | undefined): number | undefined {
  const value = lastEventId?.trim() ?? '';
  if (value === '') return undefined;
  const position = Number(value);
  if (!/^-?\d+$/.test(value) || !Number.isSafeInteger(position) || position < -1) throw new HttpError(400, 'Last-Event-ID must be a log position (an integer, -1 or more)');
  return position;
}
