import { applyDecorators, SetMetadata, UseGuards, UseInterceptors } from '@nestjs/common';
import { IdempotencyInterceptor } from '../http/idempotency.interceptor';
import { ChangeGuard } from './change.guard';
import { ANY_MEMBER, CHANGES, type ChangedResource } from './changed-resource';

export { ANY_MEMBER, CHANGES, type ChangedResource } from './changed-resource';

/*
 * The role rule's guard and the idempotency interceptor go on the routes that need them, not on
 * every route: as global enhancers they cost every request, reads included, a promise and an rxjs
 * chain in Nest's pipeline (about 30 µs of CPU of the ~300 a request took), to do nothing. Every
 * write route is marked `@Changes` or `@AnyMember` (or `@Public`, which has no key to record a
 * response under); write-routes.unit.spec.ts checks each carries what its mark brings.
 */

/** The route changes (or, like the SSH key of a VM, gives the power to change) a resource its owner or an org admin may change. */
export const Changes = (resource: ChangedResource) => applyDecorators(SetMetadata(CHANGES, resource), UseGuards(ChangeGuard), UseInterceptors(IdempotencyInterceptor));

/**
 * A write any member may make: it creates something of their own, or touches only their own
 * things, or has a rule of its own (`why` says which). Every write route is either this or
 * `@Changes` (a spec checks), so no write escapes the role rule unawares.
 */
export const AnyMember = (why: string) => applyDecorators(SetMetadata(ANY_MEMBER, why), UseInterceptors(IdempotencyInterceptor));
