import { type ArgumentMetadata, createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { HttpError } from '../http/http-error';
import { EdgeValidationPipe } from '../http/validation.pipe';

/**
 * Keys the HTTP edge cannot carry intact: the validation pipe deletes keys of these names from
 * every body (against prototype pollution), and class-transformer skips `__proto__` and
 * `constructor` (and fails on an object whose `constructor` is a string). Stored, they would
 * either vanish silently or break a read, so they are refused.
 */
const UNCARRIED_KEYS = ['__proto__', 'constructor', 'prototype'];

/**
 * Validates like every body (a 422 naming the field), after refusing a variable named like one
 * of UNCARRIED_KEYS with a 400 that names it, like any other bad key. It sees the body as sent
 * because it runs on a custom parameter, which the global pipe (that strips those keys) skips.
 */
class EnvVarsBodyPipe extends EdgeValidationPipe {
  constructor() {
    super();
    this.validateCustomDecorators = true;
  }

  override async transform(body: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const vars = typeof body === 'object' && body !== null ? (body as { vars?: unknown }).vars : undefined;
    if (typeof vars === 'object' && vars !== null) {
      const uncarried = UNCARRIED_KEYS.find((key) => Object.hasOwn(vars, key));
      if (uncarried) throw new HttpError(400, `env var key '${uncarried}' is not allowed: it is a special name of JavaScript objects`);
    }
    return super.transform(body, metadata);
  }
}

/** The request body as the client sent it: a custom parameter, so the global pipe leaves it alone. */
const SentBody = createParamDecorator((_: unknown, context: ExecutionContext): unknown => context.switchToHttp().getRequest<{ body: unknown }>().body);

/** The body of PUT /env_vars, validated against its parameter's type (SetEnvVarsRequestDto). */
export const EnvVarsBody = (): ParameterDecorator => SentBody(new EnvVarsBodyPipe());
