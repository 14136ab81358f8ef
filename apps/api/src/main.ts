import 'reflect-metadata';
import { closeInfrastructure, openInfrastructure, announceAdminKey, runArborProcess } from '@arbor/application';
import { infoLines } from '@arbor/observability';
import { bootstrapAdminKey } from './bootstrap/bootstrap-admin-key';
import { createApiApp } from './create-api-app';

/** `npm run start:api`: the stateless HTTP edge alone (run any number of them); /metrics on its own port. */
runArborProcess('api', async (config, log) => {
  const infra = await openInfrastructure(config, infoLines(log));
  const bootstrap = await bootstrapAdminKey(infra.eventStore, config);
  announceAdminKey(bootstrap.created_key !== null, bootstrap.key_file);
  const app = await createApiApp(infra, { log });
  await app.listen(config.port, '0.0.0.0');
  log.info(`arbor api: listening on port ${config.port}`);
  return async () => {
    await app.close();
    await closeInfrastructure(infra);
  };
});
