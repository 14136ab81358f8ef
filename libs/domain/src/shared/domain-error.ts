/**
 * A rule of the domain said no, or an operation ended in failure. The kind decides the HTTP status
 * at the edge; the message is what the client reads, so it says what is wrong.
 */
export type DomainErrorKind =
  | 'not_found' // 404 (another org's resource is reported exactly like a missing one)
  | 'unauthorized' // 401: the caller has not proven who they are (yet)
  | 'forbidden' // 403: the caller is known, and their role does not allow it
  | 'conflict' // 409: the resource's current state forbids the operation
  | 'invalid' // 400: well-formed input that breaks a rule
  | 'too_large' // 413: more than a limit allows
  | 'rate_limited' // 429: too many in a while; RateLimitedError says when to try again
  | 'unprocessable' // 422: input of the wrong shape
  | 'failed'; // 500: the host could not carry the operation out; the message is its reason

export class DomainError extends Error {
  constructor(
    readonly kind: DomainErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

/** Too many requests of one kind in a while: answered 429 with `Retry-After: retry_after_seconds`. */
export class RateLimitedError extends DomainError {
  constructor(
    message: string,
    readonly retry_after_seconds: number,
  ) {
    super('rate_limited', message);
    this.name = 'RateLimitedError';
  }
}

export const notFound = (what: string) => new DomainError('not_found', `${what} not found`);
export const conflict = (message: string) => new DomainError('conflict', message);
export const invalid = (message: string) => new DomainError('invalid', message);
export const forbidden = (message: string) => new DomainError('forbidden', message);
export const unauthorized = (message: string) => new DomainError('unauthorized', message);
export const failed = (reason: string) => new DomainError('failed', reason);
