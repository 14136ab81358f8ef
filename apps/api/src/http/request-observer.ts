import type { FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { UUID_PATTERN } from '@arbor/domain';
import { httpRequestDuration, httpRequests, type Log, type LogContext, withLogContext } from '@arbor/observability';

/** The request's log context, kept on the request: the Ctx decorator completes it (see correlationOf). */
const CONTEXT = Symbol('arbor:log-context');
type ObservedRequest = IncomingMessage & { [CONTEXT]?: LogContext & { correlation_id: string } };

/** Probes answered often and uneventfully: their lines are debug, not info. */
const QUIET_PATHS = new Set(['/health', '/metrics']);

/**
 * Every request, observed: its log context (the correlation id: the client's `X-Correlation-Id`
 * when it is a UUID, otherwise a new one, which becomes the command id of what it runs), echoed in
 * the `X-Correlation-Id` response header; once answered, one log line and the HTTP metrics by
 * route template (never the raw path: ids would make a series each) and status.
 *
 * `begin` is Fastify's first hook (onRequest), after routing and before the body is read, so a
 * body that fails to parse is counted and logged too; Fastify carries the context it enters
 * through the body's parsing to the handler.
 */
export function requestObserver(log: Log) {
  const httpLog = log.child({ component: 'http' });
  return {
    begin(fastifyRequest: FastifyRequest, reply: FastifyReply, next: () => void): void {
      const request: ObservedRequest = fastifyRequest.raw;
      const response = reply.raw;
      const header = request.headers['x-correlation-id'];
      const context = { correlation_id: typeof header === 'string' && UUID_PATTERN.test(header) ? header : randomUUID() };
      request[CONTEXT] = context;
      response.setHeader('X-Correlation-Id', context.correlation_id);
      const started = process.hrtime.bigint();
      response.once('close', () => {
        const route = routeOf(fastifyRequest);
        const path = pathOf(request);
        const labels = { method: request.method ?? '', route, status: String(response.statusCode) };
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        httpRequests.inc(labels);
        httpRequestDuration.observe(labels, seconds);
        const line = { ...context, method: request.method, route, path, status: response.statusCode, duration_ms: Math.round(seconds * 1000), ...(response.writableFinished ? {} : { aborted: true }) };
        const message = `${request.method} ${path} ${response.statusCode}`;
        if (QUIET_PATHS.has(path)) httpLog.debug(line, message);
        else httpLog.info(line, message);
      });
      withLogContext(context, next);
    },
  };
}

/** The request's path as sent, without its query (what Express called `req.path`). */
export function pathOf(request: IncomingMessage): string {
  const url = request.url ?? '/';
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/**
 * The correlation id of the request, once the Ctx decorator knows its command: with an
 * X-Idempotency-Key and no X-Correlation-Id it is the command id (the same on every retry, as
 * the events are), and the rest of the request's lines and its response header say so too.
 */
export function correlateRequest(request: IncomingMessage, response: ServerResponse, correlation_id: string): void {
  const context = (request as ObservedRequest)[CONTEXT];
  if (context) context.correlation_id = correlation_id;
  if (!response.headersSent) response.setHeader('X-Correlation-Id', correlation_id);
}

/** The request's correlation id as `begin` chose it (null outside an observed request). */
export function requestCorrelationId(request: IncomingMessage): string | null {
  return (request as ObservedRequest)[CONTEXT]?.correlation_id ?? null;
}

/** The route template that answered (`/api/v1/vm/:vm_id`), or "unmatched": a bounded set either way. */
function routeOf(request: FastifyRequest): string {
  // Fastify's 404 handler has no route of its own.
  return request.is404 ? 'unmatched' : (request.routeOptions.url ?? 'unmatched');
}
