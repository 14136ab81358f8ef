import 'reflect-metadata';
import { loadConfig, closeInfrastructure, openInfrastructure, announceAdminKey, runUntilSignalled } from '@arbor/application';
import { bootstrapAdminKey } from './bootstrap/bootstrap-admin-key';
import { createApiApp } from './create-api-app';

/** `npm run start:api`: the stateless HTTP edge alone (run any number of them). */
async function main() {
  const config = loadConfig();
  const infra = await openInfrastructure(config, console.log);
  const bootstrap = await bootstrapAdminKey(infra.eventStore, config);
  announceAdminKey(bootstrap.created_key, bootstrap.key_file);
  const app = await createApiApp(infra);
  await app.listen(config.port, '0.0.0.0');
  console.log(`arbor api: listening on port ${config.port}`);
  await runUntilSignalled(async () => {
    await app.close();
    await closeInfrastructure(infra);
  });
}

main().catch((error) => {
  console.error(`arbor api: failed to start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
