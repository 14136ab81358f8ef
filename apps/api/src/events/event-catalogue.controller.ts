import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { EventCatalogueResponseDto } from '@arbor/contracts';
import { EVENT_CATALOGUE } from '@arbor/domain';
import { Public } from '../auth/public.decorator';

/**
 * The event catalogue: every event type, its version and the JSON Schema of its data. No key
 * needed, and a controller of its own so the OpenAPI document says so (the audit feed's
 * controller-wide bearer auth would mark it secured).
 */
@ApiTags('events')
@Public()
@Controller('api/v1')
export class EventCatalogueController {
  @Get('events/types')
  @ApiOkResponse({ type: EventCatalogueResponseDto })
  catalogue(): EventCatalogueResponseDto {
    return { types: Object.entries(EVENT_CATALOGUE).map(([type, entry]) => ({ type, ...entry })) };
  }
}
