import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Log } from './log';
import { collectProcessMetrics, metricsText } from './metrics';
import type { MetricsSettings } from './metrics-settings';
import { scrapeAllowed } from './metrics-token';

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

/**
 * GET /metrics on a port of its own, for the processes that serve no HTTP otherwise (projector,
 * worker, webhook deliverer): `ARBOR_METRICS_PORT` (0: any free port, logged; unset: none, and
 * null is returned). With a token, a scrape must send `Authorization: Bearer <token>`.
 */
export async function serveMetrics(settings: MetricsSettings, log: Log): Promise<MetricsServer | null> {
  const wanted = settings.port;
  if (wanted === null) return null;
  collectProcessMetrics();
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found: metrics are at GET /metrics\n');
      return;
    }
    if (!scrapeAllowed(request.headers.authorization, settings.token)) {
      response.writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer' }).end('unauthorized\n');
      return;
    }
    metricsText().then(
      ({ contentType, body }) => response.writeHead(200, { 'content-type': contentType }).end(request.method === 'HEAD' ? undefined : body),
      (error: Error) => {
        log.error(`metrics: collecting failed: ${error.message}`);
        response.writeHead(500, { 'content-type': 'text/plain' }).end('collecting the metrics failed\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(wanted, '0.0.0.0', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  log.info(`metrics: serving /metrics on port ${port}`);
  return {
    port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
