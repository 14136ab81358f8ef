import type { Decider } from '../shared/decider';
import type { ApiKeyUsageCommand } from './api-key-usage.commands';
import type { ApiKeyUsageEvent } from './api-key-usage.events';

export interface ApiKeyUsageState {
  used_at: string | null;
}

/** The hour a time falls in (UTC), as the usage streams name it: `2026-11-24T10`. */
export const usageHourOf = (time: string) => time.slice(0, 13);

/** The first use of the hour is recorded; any later one changes nothing. */
export const apiKeyUsageDecider: Decider<ApiKeyUsageCommand, ApiKeyUsageState, ApiKeyUsageEvent> = {
  initialState: () => ({ used_at: null }),
  decide: (command, state) => (state.used_at ? [] : [{ type: 'ApiKeyUsed', data: { key_id: command.key_id, used_at: command.now } }]),
  evolve: (_state, event) => ({ used_at: event.data.used_at }),
};
