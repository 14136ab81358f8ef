import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { Response } from 'express';
import { DomainError } from '../../../../libs/domain/src';
import { WaitTimeoutError } from '../../../../libs/application/src/wait-until';
import { BranchFailedError, HttpError } from './http-error';

const STATUS_BY_KIND: Record<DomainError['kind'], number> = {
  not_found: 404,
  forbidden: 403,
  conflict: 409,
  invalid: 400,
  unprocessable: 422,
};

/** Every error leaves as `{"error": "...", "success": false}` with the right status. */
@Catch()
export class ErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('http');

  catch(exception: unknown, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<Response>();
    const [status, message] = this.describe(exception);
    if (status >= 500) this.logger.error(exception instanceof Error ? (exception.stack ?? exception.message) : String(exception));
    if (response.headersSent) {
      response.end();
      return;
    }
    if (exception instanceof BranchFailedError) {
      response.status(status).json({ vms: exception.vms, error: message });
      return;
    }
    response.status(status).json({ error: message, success: false });
  }

  private describe(exception: unknown): [number, string] {
    if (exception instanceof HttpError) return [exception.status, exception.message];
    if (exception instanceof DomainError) return [STATUS_BY_KIND[exception.kind], exception.message];
    if (exception instanceof WaitTimeoutError) return [504, exception.message];
    // body-parser errors reach here wrapped by Nest's express adapter (the original is the cause).
    const parser = ((exception as { cause?: unknown })?.cause ?? exception) as { type?: string; message?: string };
    if (parser?.type === 'entity.parse.failed') return [400, `Failed to parse the request body as JSON: ${parser.message}`];
    if (parser?.type === 'entity.too.large') return [413, 'request body is too large'];
    if (exception instanceof HttpException) {
      const body = exception.getResponse();
      const message = typeof body === 'string' ? body : ((body as { message?: string | string[] }).message ?? exception.message);
      return [exception.getStatus(), Array.isArray(message) ? message.join('; ') : message];
    }
    return [500, 'internal error'];
  }
}
