import { HttpException } from '@nestjs/common';
import { WaitTimeoutError } from '@arbor/application';
import { DomainError } from '@arbor/domain';
import { HttpError } from './http-error';

/** The one table from a domain rule's kind to its HTTP status. */
const STATUS_BY_KIND: Record<DomainError['kind'], number> = {
  not_found: 404,
  unauthorized: 401,
  forbidden: 403,
  conflict: 409,
  invalid: 400,
  too_large: 413,
  rate_limited: 429, // with Retry-After (RateLimitedError)
  unprocessable: 422,
  failed: 500, // the host could not carry it out: the message is its reason
};

/**
 * The status and message an error leaves the API with: HttpError as given, a domain rule by its
 * kind, a wait that ran out 504, framework errors as Nest, Fastify or body-parser classify them, anything
 * else 500 (its message is not shown: it may be an internal detail).
 */
export function describeError(error: unknown): [status: number, message: string] {
  if (error instanceof HttpError) return [error.status, error.message];
  if (error instanceof DomainError) return [STATUS_BY_KIND[error.kind], error.message];
  if (error instanceof WaitTimeoutError) return [504, error.message];
  // body-parser's errors (json-body.ts) reach here from Fastify's content-type parser, maybe wrapped (the original is the cause).
  const parser = ((error as { cause?: unknown })?.cause ?? error) as { type?: string; message?: string; status?: number; expose?: boolean };
  if (parser?.type === 'entity.parse.failed') return [400, `Failed to parse the request body as JSON: ${parser.message}`];
  if (parser?.type === 'entity.too.large') return [413, 'request body is too large'];
  // body-parser's other refusals (an unsupported charset or content encoding, a body cut short):
  // http-errors marks the ones whose message is meant for the client.
  if (typeof parser?.type === 'string' && parser.expose === true && typeof parser.status === 'number' && parser.status >= 400 && parser.status < 500) {
    return [parser.status, `Failed to read the request body: ${parser.message}`];
  }
  // Fastify's own refusals of a request it cannot route or read (a path with a broken %-escape,
  // a Content-Type that does not parse): their status, their message.
  const fastify = error as { code?: unknown; statusCode?: unknown; message?: string };
  if (typeof fastify?.code === 'string' && fastify.code.startsWith('FST_') && typeof fastify.statusCode === 'number' && fastify.statusCode >= 400 && fastify.statusCode < 500) {
    return [fastify.statusCode, fastify.message ?? 'bad request'];
  }
  if (error instanceof HttpException) {
    const body = error.getResponse();
    const message = typeof body === 'string' ? body : ((body as { message?: string | string[] }).message ?? error.message);
    return [error.getStatus(), Array.isArray(message) ? message.join('; ') : message];
  }
  return [500, 'internal error'];
}
