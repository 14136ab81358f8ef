import 'reflect-metadata';
import { loadConfig, announceAdminKey, runUntilSignalled } from '@arbor/application';
import { startEmbedded } from './embedded';

/** `npm start`: the whole control plane in one process on the embedded stores. */
async function main() {
  const config = loadConfig();
  const arbor = await startEmbedded(config);
  announceAdminKey(arbor.createdAdminKey, arbor.adminKeyFile);
  console.log(`arbor: listening on ${arbor.url} (OpenAPI at ${arbor.url}/api/docs), data in ${config.dataDir}`);
  await runUntilSignalled(() => arbor.stop());
}

main().catch((error) => {
  console.error(`arbor: failed to start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
