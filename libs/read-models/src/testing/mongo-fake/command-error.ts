/** A command failure, answered as `{ ok: 0, code, codeName, errmsg, errorLabels }` like the server does. */
export class CommandError extends Error {
  constructor(
    readonly code: number,
    readonly codeName: string,
    message: string,
    readonly errorLabels: string[] = [],
  ) {
    super(message);
  }
}
