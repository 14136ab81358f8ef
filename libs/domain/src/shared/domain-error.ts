/**
 * A rule of the domain said no, or an operation ended in failure. The kind decides the HTTP status
 * at the edge; the message is what the client reads, so it says what is wrong.
 */
export type DomainErrorKind =
  | 'not_found' // 404 (another org's resource is reported exactly like a missing one)
  | 'forbidden' // 403
  | 'conflict' // 409: the resource's current state forbids the operation
  | 'invalid' // 400: well-formed input that breaks a rule
  | 'too_large' // 413: more than a limit allows
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

export const notFound = (what: string) => new DomainError('not_found', `${what} not found`);
export const conflict = (message: string) => new DomainError('conflict', message);
export const invalid = (message: string) => new DomainError('invalid', message);
export const failed = (reason: string) => new DomainError('failed', reason);
