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

/** The bootstrap admin key is shown exactly once, on the start that created it. */
export function announceAdminKey(createdKey: string | null, keyFile: string): void {
  if (!createdKey) return;
  console.log('');
  console.log('arbor: created the first org and its admin API key (shown once; also saved, mode 0600, in');
  console.log(`arbor: ${keyFile}):`);
  console.log(`\n    ${createdKey}\n`);
}
