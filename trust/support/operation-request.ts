import { randomUUID } from 'node:crypto';
import { sample } from 'openapi-sampler';
import { type Exchange, exchange, queryString } from './exchange';
import { fillPath, type OpenApiDocument, type Operation } from './openapi-operations';
import { type OrgResources, pathValueOf, requiredQueryOf, validBodyFields } from './org-resources';

/** One request of an operation, in parts: what the fuzzer changes and the walls swap. */
export interface OperationRequest {
  pathValues: Record<string, string>;
  query: Record<string, string>;
  /** JSON to send, or raw bytes with their own headers; null: no body. */
  body: { json: unknown } | { raw: string | Buffer; headers: Record<string, string> } | null;
  headers: Record<string, string>;
}

/** Path values that name nothing: a random UUID for ids, a name nobody has for names. */
export function missingPathValues(operation: Operation): Record<string, string> {
  const values: Record<string, string> = {};
  for (const { name, in: where } of operation.parameters) {
    if (where === 'path') values[name] = /id$/.test(name) ? randomUUID() : name === 'key' ? 'NOBODY_VAR' : 'nobody-has-this';
  }
  return values;
}

/**
 * A valid request of the operation on `resources`: they fill its path (unless `pathValues` are
 * given), its required query, and the body sampled from its schema (openapi-sampler) where a
 * sample is no valid value (ids, names, sizes).
 */
export function validRequest(document: OpenApiDocument, operation: Operation, resources: OrgResources, pathValues?: Record<string, string>): OperationRequest {
  let body: OperationRequest['body'] = null;
  if (operation.body) {
    const sampled = sample(operation.body.schema as any, { skipReadOnly: true, skipNonRequired: false }, document) as Record<string, unknown>;
    const fields = validBodyFields(resources, operation.body.name);
    const merged: Record<string, unknown> = { ...sampled, ...fields };
    for (const [name, value] of Object.entries(fields)) if (value === null) delete merged[name];
    body = { json: merged };
  }
  const path =
    pathValues ?? Object.fromEntries(operation.parameters.filter((p) => p.in === 'path').map((p) => [p.name, pathValueOf(resources, operation, p.name)]));
  return { pathValues: path, query: requiredQueryOf(operation), body, headers: {} };
}

/** Sends the request with `key` (when the operation asks for one) and the correlation id given. */
export async function sendOperation(baseUrl: string, operation: Operation, request: OperationRequest, options: { key: string | null; correlation: string }): Promise<Exchange> {
  const headers: Record<string, string> = { ...request.headers, 'x-correlation-id': options.correlation };
  if (options.key !== null) headers.authorization = `Bearer ${options.key}`;
  let body: string | Buffer | undefined;
  if (request.body && 'json' in request.body) {
    body = JSON.stringify(request.body.json);
    headers['content-type'] = 'application/json';
  } else if (request.body) {
    body = request.body.raw;
    Object.assign(headers, request.body.headers);
  }
  const target = fillPath(operation.path, request.pathValues) + queryString(request.query);
  return exchange(baseUrl, { method: operation.method, target, headers, body });
}
