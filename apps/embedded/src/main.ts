import '../../vm-worker/src/uv-threadpool';
import 'reflect-metadata';
import { announceAdminKey, runArborProcess } from '@arbor/application';
import { announceEdge } from '../../edge/src/announce-edge';
import { startEmbedded } from './embedded';

/** `npm start`: the whole control plane (and the edge) in one process on the embedded stores; /metrics on its port. */
runArborProcess('embedded', async (config, log) => {
  const arbor = await startEmbedded(config, { log });
  announceAdminKey(arbor.createdAdminKey !== null, arbor.adminKeyFile);
  log.info(`arbor: listening on ${arbor.url} (OpenAPI at ${arbor.url}/api/docs), data in ${config.dataDir}`);
  announceEdge(arbor.edge, config, log);
  return () => arbor.stop();
});
