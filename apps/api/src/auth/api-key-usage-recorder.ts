import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { AggregateRepository, ARBOR_CONFIG, type ArborConfig } from '@arbor/application';
import { ApiKeyUsage, deterministicUuid, usageHourOf } from '@arbor/domain';
import type { Principal } from './principal';

interface Sighting {
  org_id: string;
  hour: string;
  /** The first request of the hour: the key's `last_used_at`, to the hour. */
  used_at: string;
}

/**
 * `last_used_at` without a write per request: each api process notes the first time it sees a
 * key in an hour, and every `ARBOR_KEY_USAGE_FLUSH_MS` (and at shutdown) appends ApiKeyUsed for
 * the hours not yet written. The hour's stream is its reservation, so however many processes saw
 * the key there is one event per key an hour; a crash loses at most one interval's sightings.
 */
@Injectable()
export class ApiKeyUsageRecorder implements OnApplicationShutdown {
  private readonly logger = new Logger('api-key-usage');
  private readonly seen = new Map<string, Sighting>();
  /** The hour last written for each key, so a key is written once an hour by this process. */
  private readonly written = new Map<string, string>();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly aggregates: AggregateRepository,
    @Inject(ARBOR_CONFIG) config: ArborConfig,
  ) {
    this.timer = setInterval(() => void this.flush(), config.keyUsageFlushMs);
    this.timer.unref();
  }

  saw(principal: Principal): void {
    const now = new Date().toISOString();
    const hour = usageHourOf(now);
    if (this.written.get(principal.key_id) === hour || this.seen.get(principal.key_id)?.hour === hour) return;
    this.seen.set(principal.key_id, { org_id: principal.org_id, hour, used_at: now });
  }

  /** Writes the sightings not yet written (one flush at a time). */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.writeSightings());
    return this.flushing;
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  private async writeSightings(): Promise<void> {
    const sightings = [...this.seen.entries()];
    this.seen.clear();
    for (const [key_id, { org_id, hour, used_at }] of sightings) {
      const command_id = deterministicUuid('api-key-use', key_id, hour);
      const context = { command_id, correlation_id: command_id, causation_id: command_id, actor_key_id: key_id, org_id };
      try {
        await this.aggregates.handle(ApiKeyUsage, { key_id, hour }, { type: 'RecordApiKeyUse', key_id, now: used_at }, context);
        this.written.set(key_id, hour);
      } catch (error) {
        this.logger.warn(`could not record the use of key ${key_id} (${hour}), trying again at the next flush: ${(error as Error).message}`);
        if (!this.seen.has(key_id)) this.seen.set(key_id, { org_id, hour, used_at });
      }
    }
    if (this.written.size > 100_000) this.written.clear();
  }
}
