import { Command } from '@nestjs/cqrs';
import type { CreatedApiKeyDto } from '@arbor/contracts';
import type { RequestContext } from '../../auth/request-context.decorator';

/** POST /arbor/v1/keys: a new key of the caller in their org (shown once). */
export class CreateApiKeyCommand extends Command<CreatedApiKeyDto> {
  constructor(
    readonly context: RequestContext,
    readonly label: unknown,
  ) {
    super();
  }
}

/** DELETE /arbor/v1/keys/{id}: the key never authenticates again (every api process within KEY_CACHE_MS). */
export class RevokeApiKeyCommand extends Command<void> {
  constructor(
    readonly context: RequestContext,
    readonly key_id: string,
  ) {
    super();
  }
}
