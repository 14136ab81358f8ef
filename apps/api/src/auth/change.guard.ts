import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { requireChange } from '@arbor/domain';
import type { AuthenticatedRequest } from './api-key.guard';
import { CHANGES, type ChangedResource } from './changed-resource';
import { ResourceOwners } from './resource-owners';

/**
 * The role rule at the edge (org-roles.ts): a route marked `@Changes(kind)` goes on only when the
 * caller may change the resource its path names: theirs, or anything in the org for an owner or
 * admin; a 403 otherwise. A resource the org does not have goes on to its handler, which answers
 * as it would anyway (404, like every other org's resource). Runs after ApiKeyGuard.
 */
@Injectable()
export class ChangeGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly owners: ResourceOwners,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const kind = this.reflector.getAllAndOverride<ChangedResource | undefined>(CHANGES, [context.getHandler(), context.getClass()]);
    if (!kind) return true;
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const resource = await this.owners.of(kind, request.principal.org_id, request.params as Record<string, string>);
    if (resource) requireChange(request.principal, resource.owner_user_id, resource.what);
    return true;
  }
}
