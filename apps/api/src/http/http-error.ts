/** An error the edge answers with a given status and the contract's `{error, success:false}` body. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Headers the answer carries (e.g. Retry-After of a 429). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/**
 * A branch that failed part-way: the contract's hybrid body `{"vms": [created so far], "error"}`
 * (no `success` field), with the status its cause has anywhere else (404, 409, 403, 500, ...).
 */
export class BranchFailedError extends HttpError {
  constructor(
    status: number,
    message: string,
    readonly vms: { vm_id: string }[],
    override readonly cause?: unknown,
  ) {
    super(status, message);
    this.name = 'BranchFailedError';
  }
}
