import type { Infrastructure } from '@arbor/application';
import { type Log, silentLog } from '@arbor/observability';
import { Projector } from './projector';
import { ALL_PROJECTIONS } from './projections';
import { replayLog } from './replay-log';

/**
 * Empties every read model and its checkpoint, then replays the whole log into them, a thousand
 * events a commit (`replayLog`): the checkpoint stays exact, so a rebuild cut short leaves read
 * models a started projector carries on from.
 */
export async function rebuildReadModels(infra: Pick<Infrastructure, 'eventStore' | 'readModels'>, log: Log = silentLog): Promise<number> {
  await new Projector(infra.eventStore, infra.readModels, ALL_PROJECTIONS, log).reset();
  return replayLog(infra.eventStore, infra.readModels);
}
