import type { LoggerService } from '@nestjs/common';
import type { Log } from '@arbor/observability';

/**
 * Nest's logging (its own, and `new Logger(context)` in the api's code) into the structured log:
 * the context becomes the line's `component`. Nest's `log` level is its start-up chatter (modules,
 * routes mapped): debug here.
 */
export class NestLog implements LoggerService {
  constructor(private readonly target: Log) {}

  log(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }

  error(message: unknown, ...params: unknown[]): void {
    // Nest passes (message, stack?, context?).
    const [stack] = params.length > 1 ? params : [];
    this.write('error', message, params, typeof stack === 'string' ? { stack } : {});
  }

  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }

  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }

  verbose(message: unknown, ...params: unknown[]): void {
    this.write('trace', message, params);
  }

  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }

  private write(level: 'trace' | 'debug' | 'warn' | 'error' | 'fatal', message: unknown, params: unknown[], fields: object = {}): void {
    const context = params.length && typeof params[params.length - 1] === 'string' ? (params[params.length - 1] as string) : undefined;
    const text = message instanceof Error ? (message.stack ?? message.message) : typeof message === 'string' ? message : JSON.stringify(message);
    this.target[level]({ ...(context ? { component: context } : {}), ...fields }, text);
  }
}
