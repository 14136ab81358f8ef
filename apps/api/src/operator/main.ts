import 'reflect-metadata';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { closeInfrastructure, EVENTS_DB, loadConfig, openInfrastructure } from '@arbor/application';
import { runOperatorCommand } from './operator-command';

/** `npm run arbor -- keys|orgs|users …`: see OPERATOR_USAGE. Exits 1 with the reason on a refused command. */
async function main() {
  const config = loadConfig();
  // An operator in the wrong directory (or without the installation's environment) is told so, rather than given a new empty store.
  if (!config.eventStoreUrl && !existsSync(join(config.dataDir, EVENTS_DB))) {
    throw new Error(`no Arbor installation in ${config.dataDir}: run this where Arbor runs, with its ARBOR_DATA_DIR (or EVENTSTORE_URL and MONGODB_URL)`);
  }
  const infra = await openInfrastructure(config);
  try {
    await runOperatorCommand(process.argv.slice(2), infra, (line) => console.log(line));
  } finally {
    await closeInfrastructure(infra);
  }
}

main().catch((error) => {
  console.error(`arbor: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
