import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { EventCatalogueResponseDto, EventDto, EventFeedQueryDto, EventFeedResponseDto } from '@arbor/contracts';
import { aggregateOfStream, EVENT_CATALOGUE, IdempotentResponse, notFound, Vm } from '@arbor/domain';
import { EVENT_STORE, type EventStore } from '@arbor/event-store';
import { Public } from '../auth/public.decorator';
import { Ctx, type RequestContext } from '../auth/request-context.decorator';
import { UuidParamPipe } from '../http/uuid-param.pipe';
import { VmReadModel } from '../vms/vm-read-model';
import { presentEvent } from './event-presenter';

const SCAN_BATCH = 500;
/** A page never scans more than this many events of other orgs before answering. */
const SCAN_LIMIT = 20_000;

/**
 * The read-only audit feed: the log itself, by position. A key sees its org's events; an
 * operator key sees every org's. Internal bookkeeping streams (idempotency records) are left out.
 */
@ApiTags('events')
@ApiBearerAuth()
@Controller('api/v1')
export class EventsController {
  constructor(
    @Inject(EVENT_STORE) private readonly events: EventStore,
    private readonly vms: VmReadModel,
  ) {}

  /** The event catalogue: every event type, its version and the JSON Schema of its data. No key needed. */
  @Get('events/types')
  @Public()
  @ApiOkResponse({ type: EventCatalogueResponseDto })
  catalogue(): EventCatalogueResponseDto {
    return { types: Object.entries(EVENT_CATALOGUE).map(([type, entry]) => ({ type, ...entry })) };
  }

  @Get('events')
  @ApiOkResponse({ type: EventFeedResponseDto })
  async feed(@Ctx() ctx: RequestContext, @Query() query: EventFeedQueryDto): Promise<EventFeedResponseDto> {
    const limit = query.limit ?? 100;
    const visible: EventDto[] = [];
    let cursor = query.after ?? -1;
    let scanned = 0;
    let exhausted = false;
    while (visible.length < limit && scanned < SCAN_LIMIT) {
      const batch = await this.events.readAll({ after_position: cursor, max_count: SCAN_BATCH });
      for (const event of batch) {
        cursor = event.position;
        scanned++;
        if (aggregateOfStream(event.stream_id) === IdempotentResponse) continue;
        if (!ctx.principal.is_operator && event.metadata.org_id !== ctx.principal.org_id) continue;
        if (query.type && event.type !== query.type) continue;
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

  @Get('vm/:vm_id/events')
  @ApiOkResponse({ type: [EventDto] })
  async vmEvents(@Ctx() ctx: RequestContext, @Param('vm_id', UuidParamPipe) vmId: string): Promise<EventDto[]> {
    if (!(await this.vms.find(ctx.principal.org_id, vmId))) throw notFound('vm');
    return (await this.events.readStream(Vm.stream(vmId))).map(presentEvent);
  }
}
