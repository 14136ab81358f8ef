import { json } from 'body-parser';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { refuseDeepJson } from './json-nesting';

/**
 * Reads and parses a request's JSON body with body-parser, whatever its content type says (the
 * same reader the API had on Express, so limits, charsets, content encodings and their errors are
 * those clients met before): `done` gets the parsed body, undefined when there is none, or
 * body-parser's error (entity.parse.failed, entity.too.large, …), which describeError answers.
 */
export function jsonBodyParser(limitBytes: number): (request: IncomingMessage, done: (error: Error | null, body?: unknown) => void) => void {
  const parse = json({ limit: limitBytes, type: () => true, verify: refuseDeepJson });
  // body-parser is middleware: it reads the request and sets `body` on it; it never touches the response.
  return (request, done) => parse(request, undefined as unknown as ServerResponse, (error?: unknown) => (error ? done(error as Error) : done(null, (request as { body?: unknown }).body)));
}
