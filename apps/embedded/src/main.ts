import 'reflect-metadata';
import { announceAdminKey, runArborProcess } from '@arbor/application';
import { startEmbedded } from './embedded';

/** `npm start`: the whole control plane in one process on the embedded stores; /metrics on its port. */
runArborProcess('embedded', async (config, log) => {
  const arbor = await startEmbedded(config, { log });
  announceAdminKey(arbor.createdAdminKey !== null, arbor.adminKeyFile);
  log.info(`arbor: listening on ${arbor.url} (OpenAPI at ${arbor.url}/api/docs), data in ${config.dataDir}`);
  return () => arbor.stop();
});
