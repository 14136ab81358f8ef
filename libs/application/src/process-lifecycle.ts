import type { Log } from '@arbor/observability';

/** Waits for SIGINT/SIGTERM, then shuts down cleanly (a second signal exits at once). */
export function runUntilSignalled(shutdown: () => Promise<void>, log: Log): Promise<void> {
  return new Promise((resolve) => {
    let stopping = false;
    const onSignal = (signal: string) => {
      if (stopping) process.exit(1);
      stopping = true;
      log.info(`arbor: ${signal}, shutting down`);
      shutdown()
        .catch((error) => log.error(`arbor: shutdown failed: ${(error as Error).message}`))
        .finally(() => resolve());
    };
    process.once('SIGINT', () => onSignal('SIGINT'));
    process.once('SIGTERM', () => onSignal('SIGTERM'));
  });
}

/**
 * On the start that created the bootstrap admin key: where it is, never the key itself, which
 * would stay in the process's output (container logs, journals) for anyone who reads those.
 */
export function announceAdminKey(created: boolean, keyFile: string): void {
  if (!created) return;
  console.log('');
  console.log(`arbor: created the first org and its admin API key, in ${keyFile} (mode 0600: only its owner reads it).`);
  console.log(`arbor: read it there, e.g. KEY=$(cat ${keyFile})`);
  console.log('');
}
