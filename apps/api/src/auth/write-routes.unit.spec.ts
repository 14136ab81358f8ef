import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { RequestMethod } from '@nestjs/common';
import { GUARDS_METADATA, INTERCEPTORS_METADATA, METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { IdempotencyInterceptor } from '../http/idempotency.interceptor';
import { ChangeGuard } from './change.guard';
import { ANY_MEMBER, CHANGES } from './changes.decorator';
import { IS_PUBLIC } from './public.decorator';

const SRC = join(__dirname, '..');
const WRITES = new Set([RequestMethod.POST, RequestMethod.PUT, RequestMethod.PATCH, RequestMethod.DELETE]);

type Controller = abstract new (...args: never[]) => object;

/** Every controller class of the api, from its *.controller.ts files. */
function controllers(): Controller[] {
  const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.controller.ts'));
  return files.flatMap((file) => Object.values(require(join(SRC, file)) as Record<string, unknown>)).filter((value): value is Controller => typeof value === 'function' && Reflect.hasMetadata(PATH_METADATA, value));
}

/**
 * No write route escapes the role rule unawares: each is `@Changes(kind)` (the ChangeGuard applies
 * org-roles.ts to what it names), `@AnyMember(why)` (it creates the caller's own, or has a rule of
 * its own), or `@Public()` (no key: the shell-auth sign-in).
 */
describe('every write route of the api says how the role rule applies to it', () => {
  const routes = controllers().flatMap((controller) =>
    Object.getOwnPropertyNames(controller.prototype)
      .map((name) => ({ controller, name, handler: (controller.prototype as Record<string, object>)[name] }))
      .filter(({ handler }) => typeof handler === 'function' && WRITES.has(Reflect.getMetadata(METHOD_METADATA, handler))),
  );

  it('finds the write routes', () => {
    expect(routes.length).toBeGreaterThan(40);
  });

  it.each(routes.map((route) => [`${route.controller.name}.${route.name}`, route] as const))('%s', (_, { controller, handler }) => {
    const marks = [IS_PUBLIC, CHANGES, ANY_MEMBER].filter((key) => Reflect.getMetadata(key, handler) !== undefined || Reflect.getMetadata(key, controller) !== undefined);
    expect(marks).toHaveLength(1);
    // The enhancers are the route's own (not global): a write with a key records its response for retries.
    if (marks[0] !== IS_PUBLIC) expect(Reflect.getMetadata(INTERCEPTORS_METADATA, handler)).toContain(IdempotencyInterceptor);
  });
});

describe('every route that names what it changes is guarded by the role rule', () => {
  const marked = controllers().flatMap((controller) =>
    Object.getOwnPropertyNames(controller.prototype)
      .map((name) => ({ controller, name, handler: (controller.prototype as Record<string, object>)[name] }))
      .filter(({ handler }) => typeof handler === 'function' && Reflect.getMetadata(CHANGES, handler) !== undefined),
  );

  it('finds them, reads among them (the SSH key of a VM gives the power to change it)', () => {
    expect(marked.length).toBeGreaterThan(20);
    expect(marked.some(({ handler }) => Reflect.getMetadata(METHOD_METADATA, handler) === RequestMethod.GET)).toBe(true);
  });

  it.each(marked.map((route) => [`${route.controller.name}.${route.name}`, route] as const))('%s', (_, { controller, handler }) => {
    expect(Reflect.getMetadata(CHANGES, controller)).toBeUndefined(); // a controller-wide mark would not bring the guard to each route
    expect(Reflect.getMetadata(GUARDS_METADATA, handler)).toContain(ChangeGuard);
  });
});
