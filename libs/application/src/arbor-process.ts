import { createLog, DEFAULT_LOG_SETTINGS, type Log } from '@arbor/observability';
import { type ArborConfig, loadConfig } from './arbor-config';
import { runUntilSignalled } from './process-lifecycle';

/**
 * Runs one of Arbor's processes (`app`: api, projector, worker, webhooks, embedded, …): reads the
 * configuration, makes the process's logger (each line names the app), starts it, and on
 * SIGINT/SIGTERM runs the shutdown that `start` returned. A failure is logged and exits with 1.
 * `start` returning null means a one-shot job that has finished.
 */
export function runArborProcess(app: string, start: (config: ArborConfig, log: Log) => Promise<(() => Promise<void>) | null>): void {
  let log = createLog(DEFAULT_LOG_SETTINGS).child({ app });
  const run = async () => {
    const config = loadConfig();
    log = createLog(config.log).child({ app });
    const shutdown = await start(config, log);
    if (shutdown) await runUntilSignalled(shutdown, log);
  };
  run().catch((error) => {
    // The stack too: a process that cannot start is an operator's to debug, from the log alone.
    log.fatal({ stack: error instanceof Error ? error.stack : undefined }, `arbor ${app}: failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
}
