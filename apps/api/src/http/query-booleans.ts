import { HttpError } from './http-error';

/** Query booleans are the strings "true"/"false" (SDKs send String(bool)); absent means false. */
export function queryBoolean(name: string, value: string | undefined): boolean {
  if (value === undefined || value === '') return false;
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new HttpError(400, `Failed to deserialize query string: ${name} must be true or false`);
}
