import 'reflect-metadata';
import { loadConfig, closeInfrastructure, openInfrastructure } from '@arbor/application';
import { rebuildReadModels } from './rebuild-read-models';

/**
 * `npm run rebuild-read-models`: empties every read model and replays the whole log into them.
 * Stop the projector first (the embedded service included).
 */
async function main() {
  const config = loadConfig();
  const infra = await openInfrastructure(config, console.log);
  const applied = await rebuildReadModels(infra, console.log);
  console.log(`arbor: rebuilt the read models from ${applied} event(s)`);
  await closeInfrastructure(infra);
}

main().catch((error) => {
  console.error(`arbor rebuild: failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
