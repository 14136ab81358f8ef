/** Where a process serves /metrics: ARBOR_METRICS_PORT, ARBOR_METRICS_TOKEN. */
export interface MetricsSettings {
  /**
   * The port of /metrics for the processes without HTTP of their own (projector, worker, webhook
   * deliverer); null: none is opened (the api and the embedded process serve it on PORT).
   */
  port: number | null;
  /** When set, a scrape must send `Authorization: Bearer <token>`. */
  token: string | null;
}

export function loadMetricsSettings(env: NodeJS.ProcessEnv): MetricsSettings {
  const raw = env.ARBOR_METRICS_PORT;
  let port: number | null = null;
  if (raw !== undefined && raw !== '') {
    port = Number(raw);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`ARBOR_METRICS_PORT must be a TCP port (got "${raw}")`);
  }
  return { port, token: env.ARBOR_METRICS_TOKEN || null };
}
