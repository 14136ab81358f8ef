import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * What every log line written while handling one request or one event carries: its correlation
 * id (the request's, or that of the event being handled), so a request's lines and the lines of
 * every process that handles the events it caused can be found together.
 */
export interface LogContext {
  correlation_id?: string;
  [field: string]: unknown;
}

const storage = new AsyncLocalStorage<LogContext>();

/**
 * Runs `work` with `context` added to the current one: every line logged by it, and by whatever
 * it starts (promises, timers, callbacks), carries the context's fields, however deep the code.
 */
export function withLogContext<T>(context: LogContext, work: () => T): T {
  const outer = storage.getStore();
  return storage.run(outer ? { ...outer, ...context } : context, work);
}

/** The context of the code running now (the one object given to withLogContext: it may be updated in place). */
export function currentLogContext(): LogContext | undefined {
  return storage.getStore();
}
