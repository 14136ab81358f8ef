import { Module } from '@nestjs/common';
import { VmsModule } from '../vms/vms.module';
import { EventCatalogueController } from './event-catalogue.controller';
import { EventsController } from './events.controller';
import { OpenStreams } from './open-streams';

/** The read-only audit feed over the log: pages, the live stream, the export; and the catalogue of its event types. */
@Module({
  imports: [VmsModule],
  controllers: [EventCatalogueController, EventsController],
  providers: [OpenStreams],
})
export class EventsModule {}
