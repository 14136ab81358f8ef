import 'reflect-metadata';
import { loadConfig, closeInfrastructure, openInfrastructure, runUntilSignalled } from '@arbor/application';
import { Projector } from './projector';
import { ALL_PROJECTIONS } from './projections';

/** `npm run start:projector`: follows the log and keeps the read models (run exactly one). */
async function main() {
  const config = loadConfig();
  const infra = await openInfrastructure(config, console.log);
  const projector = new Projector(infra.eventStore, infra.readModels, ALL_PROJECTIONS, console.log);
  await projector.start();
  await runUntilSignalled(async () => {
    await projector.stop();
    await closeInfrastructure(infra);
  });
}

main().catch((error) => {
  console.error(`arbor projector: failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
