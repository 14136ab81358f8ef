import { Module } from '@nestjs/common';
import { VmsModule } from '../vms/vms.module';
import { MetricsController } from './metrics.controller';
import { VmCountsReporter } from './vm-counts-reporter';

/** GET /metrics (Prometheus) and what only the api reports there (VMs by state). */
@Module({
  imports: [VmsModule],
  controllers: [MetricsController],
  providers: [VmCountsReporter],
})
export class MetricsModule {}
