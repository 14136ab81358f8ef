import 'reflect-metadata';
import { closeInfrastructure, loadConfig, openInfrastructure } from '@arbor/application';
import { runAdmin } from './run-admin';

/**
 * `npm run admin -- <command>`: the operator's commands for the installation's secrets (see
 * ADMIN_USAGE), run where the stores are reachable, with the same settings as the api
 * (ARBOR_DATA_DIR, or EVENTSTORE_URL/MONGODB_URL, and ARBOR_SECRETS_KEY). The service may keep running.
 */
async function main() {
  const infra = await openInfrastructure(loadConfig());
  try {
    await runAdmin(process.argv.slice(2), infra, { line: (text) => console.log(text) });
  } finally {
    await closeInfrastructure(infra);
  }
}

main().catch((error) => {
  console.error(`arbor admin: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
