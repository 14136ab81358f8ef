import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { randomUUID } from 'node:crypto';
import type { CommandContext } from '@arbor/application';
import { deterministicUuid, UUID_PATTERN } from '@arbor/domain';
import { correlateRequest, pathOf, requestCorrelationId } from '../http/request-observer';
import type { AuthenticatedRequest } from './api-key.guard';
import type { Principal } from './principal';

export interface RequestContext {
  principal: Principal;
  command: CommandContext;
  /** The client's X-Idempotency-Key, if any: the command id derives from it. */
  idempotency_key: string | null;
}

/**
 * The command id and correlation id of this request. With an X-Idempotency-Key the command id
 * (and so every id derived from it) is the same on each retry of the logical call. The correlation
 * id is the client's X-Correlation-Id, else the command id; without either header the command id
 * is the id the request's log lines already carry, so its lines and its events share one id. The
 * request's log context and its X-Correlation-Id answer say so from here on.
 */
export function correlateCommand(request: AuthenticatedRequest, reply: FastifyReply): { command_id: string; correlation_id: string; idempotency_key: string | null } {
  const header = request.headers['x-idempotency-key'];
  const idempotency_key = typeof header === 'string' && header.length > 0 ? header : null;
  const correlationHeader = request.headers['x-correlation-id'];
  const clientCorrelation = typeof correlationHeader === 'string' && UUID_PATTERN.test(correlationHeader) ? correlationHeader : null;
  const command_id = idempotency_key
    ? deterministicUuid(request.principal.org_id, request.method, pathOf(request.raw), idempotency_key)
    : ((clientCorrelation ? null : requestCorrelationId(request.raw)) ?? randomUUID());
  const correlation_id = clientCorrelation ?? command_id;
  correlateRequest(request.raw, reply.raw, correlation_id);
  return { command_id, correlation_id, idempotency_key };
}

/** The caller and the command context of this request (see correlateCommand). */
export const Ctx = createParamDecorator((_: unknown, context: ExecutionContext): RequestContext => {
  const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
  const principal = request.principal;
  const { command_id, correlation_id, idempotency_key } = correlateCommand(request, context.switchToHttp().getResponse<FastifyReply>());
  return {
    principal,
    idempotency_key,
    command: { command_id, correlation_id, causation_id: command_id, actor_key_id: principal.key_id, org_id: principal.org_id },
  };
});
