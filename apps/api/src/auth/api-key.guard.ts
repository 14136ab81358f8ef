import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { HttpError } from '../http/http-error';
import { ApiKeyAuthenticator } from './api-key-authenticator';
import type { Principal } from './principal';
import { IS_PUBLIC } from './public.decorator';

export type AuthenticatedRequest = FastifyRequest & { principal: Principal };

/** `Authorization: Bearer <key>` on every route but the public ones; 401 JSON otherwise. */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly authenticator: ApiKeyAuthenticator,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [context.getHandler(), context.getClass()])) return true;
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
    const principal = match ? await this.authenticator.authenticate(match[1]) : null;
    if (!principal) throw new HttpError(401, 'Unauthorized');
    request.principal = principal;
    return true;
  }
}
