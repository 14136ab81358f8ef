import { type ArgumentsHost, Catch, type ExceptionFilter, Logger } from '@nestjs/common';
import type { Response } from 'express';
import { RateLimitedError } from '@arbor/domain';
import { describeError } from './error-status';
import { BranchFailedError, HttpError } from './http-error';

/** Every error leaves as `{"error": "...", "success": false}` with the right status. */
@Catch()
export class ErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('http');

  catch(exception: unknown, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<Response>();
    const [status, message] = describeError(exception);
    if (status >= 500) {
      const cause = exception instanceof BranchFailedError && exception.cause !== undefined ? exception.cause : exception;
      this.logger.error(cause instanceof Error ? (cause.stack ?? cause.message) : String(cause));
    }
    if (response.headersSent) {
      response.end();
      return;
    }
    for (const [name, value] of Object.entries(headersOf(exception))) response.setHeader(name, value);
    if (exception instanceof BranchFailedError) {
      response.status(status).json({ vms: exception.vms, error: message });
      return;
    }
    response.status(status).json({ error: message, success: false });
  }
}

/** The headers an error's answer carries: an HttpError's own, a rate limit's Retry-After. */
function headersOf(exception: unknown): Record<string, string> {
  if (exception instanceof HttpError) return exception.headers;
  if (exception instanceof RateLimitedError) return { 'Retry-After': String(exception.retry_after_seconds) };
  return {};
}
