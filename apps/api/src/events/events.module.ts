import { Module } from '@nestjs/common';
import { VmsModule } from '../vms/vms.module';
import { EventsController } from './events.controller';

/** The read-only audit feed over the log. */
@Module({ imports: [VmsModule], controllers: [EventsController] })
export class EventsModule {}
