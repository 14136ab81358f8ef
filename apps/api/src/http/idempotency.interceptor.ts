import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { createHash } from 'node:crypto';
import { from, mergeMap, of, type Observable } from 'rxjs';
import { AggregateRepository, isSealed, newCommandContext } from '@arbor/application';
import { IdempotentResponse } from '@arbor/domain';
import type { AuthenticatedRequest } from '../auth/api-key.guard';
import { correlateCommand } from '../auth/request-context.decorator';
import { pathOf } from './request-observer';
import { HttpError } from './http-error';

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * `X-Idempotency-Key` on a write: the first successful response is recorded in the log
 * (`idempotency-<org>-<hash>`), and a retry with the same key gets that response again without
 * running the command twice. Commands derive their ids from the key too, so a retry that comes
 * before a response was recorded (the first attempt timed out with 504, or its process died, or
 * it is still running) runs the handler again and each command step finds the events it
 * appended the first time and carries on from them (see AggregateRepository.handle) instead of meeting its own
 * outcome as a conflict: it answers the first result once that is reached. A genuine conflict
 * (someone else's events) answers at once.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(private readonly aggregates: AggregateRepository) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    const key = request.headers['x-idempotency-key'];
    if (!WRITE_METHODS.has(request.method) || typeof key !== 'string' || !key || !request.principal) return next.handle();
    if (key.length > 255) throw new HttpError(400, 'X-Idempotency-Key must be at most 255 characters');

    const record = { org_id: request.principal.org_id, key_hash: createHash('sha256').update(key).digest('hex').slice(0, 32) };
    return from(this.aggregates.load(IdempotentResponse, record)).pipe(
      mergeMap(({ state }) => {
        const first = state.response;
        if (first) {
          if (first.method !== request.method || first.path !== pathOf(request.raw)) {
            throw new HttpError(422, 'X-Idempotency-Key was already used for a different request');
          }
          if (isSealed(first.body)) throw new HttpError(409, "the first response to this X-Idempotency-Key can no longer be read: the org's secrets key was deleted");
          // The replay is logged under the id the first attempt's events carry.
          correlateCommand(request, reply);
          reply.status(first.status).header('Idempotent-Replayed', 'true');
          return of(first.body ?? undefined);
        }
        return next.handle().pipe(
          mergeMap(async (body) => {
            // A streamed answer (NDJSON exec) was written by the handler itself: nothing to record;
            // a retry re-runs the handler, which follows the same exec again from its start.
            if (reply.sent || reply.raw.headersSent) return body;
            const recorded = { type: 'RecordIdempotentResponse' as const, method: request.method, path: pathOf(request.raw), status: reply.statusCode, body: body ?? null };
            // The first response stands (see idempotentResponseDecider): a concurrent twin records nothing.
            const command = newCommandContext({ command_id: IdempotentResponse.stream(record), org_id: record.org_id, actor_key_id: request.principal.key_id });
            await this.aggregates.handle(IdempotentResponse, record, recorded, command);
            return body;
          }),
        );
      }),
    );
  }
}
