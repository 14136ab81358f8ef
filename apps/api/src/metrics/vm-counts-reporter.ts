import { Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { reportVmCounts } from '@arbor/observability';
import { VmReadModel } from '../vms/vm-read-model';

/**
 * `arbor_vms{state}` from the read models, counted when scraped: what the api can see cheaply (a
 * count per state), the same figure on every api replica.
 */
@Injectable()
export class VmCountsReporter implements OnModuleInit, OnModuleDestroy {
  private stop: (() => void) | null = null;

  constructor(private readonly vms: VmReadModel) {}

  onModuleInit(): void {
    this.stop = reportVmCounts(() => this.vms.countByStateInstallationWide());
  }

  onModuleDestroy(): void {
    this.stop?.();
  }
}
