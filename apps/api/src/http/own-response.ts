import type { FastifyReply } from 'fastify';
import type { ServerResponse } from 'node:http';

/**
 * Node's response under a Fastify reply, taken out of Fastify's hands (hijacked): for answers
 * written as they are made (exec streams, the event stream and export, error answers of those)
 * and pages written whole. Fastify then neither sends nor waits for anything of this request.
 */
export function ownResponse(reply: FastifyReply): ServerResponse {
  if (reply.sent) return reply.raw;
  // Headers given to the reply so far (a route's @Header, say) are Fastify's until it sends: move them over.
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined && !reply.raw.hasHeader(name)) reply.raw.setHeader(name, value);
  reply.hijack();
  return reply.raw;
}

/** A whole JSON answer with its length, as a framework sends one. */
export function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.statusCode = status;
  response.setHeader('Content-Type', 'application/json; charset=utf-8');
  response.setHeader('Content-Length', Buffer.byteLength(text));
  response.end(text);
}
