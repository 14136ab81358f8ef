import 'reflect-metadata';
import { closeInfrastructure, openInfrastructure, runArborProcess } from '@arbor/application';
import { infoLines, serveMetrics } from '@arbor/observability';
import { ALL_PROJECTIONS, Projector } from '@arbor/projections';

/** `npm run start:projector`: follows the log and keeps the read models (run exactly one). */
runArborProcess('projector', async (config, log) => {
  const infra = await openInfrastructure(config, infoLines(log));
  const metrics = await serveMetrics(config.metrics, log);
  const projector = new Projector(infra.eventStore, infra.readModels, ALL_PROJECTIONS, log);
  await projector.start();
  return async () => {
    await metrics?.close();
    await projector.stop();
    await closeInfrastructure(infra);
  };
});
