import { type ArgumentsHost, Catch, type ExceptionFilter, Logger } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { RateLimitedError } from '@arbor/domain';
import { describeError } from './error-status';
import { BranchFailedError, HttpError } from './http-error';
import { ownResponse, sendJson } from './own-response';

/** Every error leaves as `{"error": "...", "success": false}` with the right status. */
@Catch()
export class ErrorFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    answerError(host.switchToHttp().getResponse<FastifyReply>(), exception);
  }
}

const logger = new Logger('http');

/**
 * Answers `exception` in the error envelope: the error filter's answer, and Fastify's own for what
 * it refuses before any route runs (`frameworkErrors`: a path with a broken %-escape).
 */
export function answerError(reply: FastifyReply, exception: unknown): void {
  const response = ownResponse(reply);
  const [status, message] = describeError(exception);
  if (status >= 500) {
    const cause = exception instanceof BranchFailedError && exception.cause !== undefined ? exception.cause : exception;
    logger.error(cause instanceof Error ? (cause.stack ?? cause.message) : String(cause));
  }
  if (response.headersSent) {
    response.end();
    return;
  }
  for (const [name, value] of Object.entries(headersOf(exception))) response.setHeader(name, value);
  if (exception instanceof BranchFailedError) {
    sendJson(response, status, { vms: exception.vms, error: message });
    return;
  }
  sendJson(response, status, { error: message, success: false });
}

/** The headers an error's answer carries: an HttpError's own, a rate limit's Retry-After. */
function headersOf(exception: unknown): Record<string, string> {
  if (exception instanceof HttpError) return exception.headers;
  if (exception instanceof RateLimitedError) return { 'Retry-After': String(exception.retry_after_seconds) };
  return {};
}
