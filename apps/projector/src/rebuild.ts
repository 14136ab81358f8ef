import 'reflect-metadata';
import { closeInfrastructure, openInfrastructure, runArborProcess } from '@arbor/application';
import { infoLines } from '@arbor/observability';
import { rebuildReadModels } from '@arbor/projections';

/**
 * `npm run rebuild-read-models`: empties every read model and replays the whole log into them.
 * Stop the projector first (the embedded service included).
 */
runArborProcess('rebuild', async (config, log) => {
  const infra = await openInfrastructure(config, infoLines(log));
  const applied = await rebuildReadModels(infra, log);
  log.info(`arbor: rebuilt the read models from ${applied} event(s)`);
  await closeInfrastructure(infra);
  return null;
});
