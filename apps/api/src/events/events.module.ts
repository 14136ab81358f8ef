import { Module } from '@nestjs/common';
import { VmsModule } from '../vms/vms.module';
import { EventsController } from './events.controller';
import { OpenStreams } from './open-streams';

/** The read-only audit feed over the log: pages, the live stream, the export. */
@Module({
  imports: [VmsModule],
  controllers: [EventsController],
  providers: [OpenStreams],
})
export class EventsModule {}
