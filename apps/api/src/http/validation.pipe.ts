import { type ArgumentMetadata, ValidationPipe, type ValidationError } from '@nestjs/common';
import { HttpError } from './http-error';

/** Flattens class-validator errors into "field.path: what is wrong" lines. */
function describe(errors: ValidationError[], prefix = ''): string[] {
  return errors.flatMap((error) => {
    const path = prefix ? `${prefix}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) => `${path}: ${message}`);
    return [...own, ...describe(error.children ?? [], path)];
  });
}

class ValidationFailure extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('; '));
  }
}

/**
 * Validates bodies and queries at the edge, naming the field, as the contract's server (axum)
 * does: a body of the wrong shape is a 422, a query string that does not deserialize is a 400.
 * Unknown fields are ignored (stripped), not rejected.
 */
export class EdgeValidationPipe extends ValidationPipe {
  constructor() {
    super({
      transform: true,
      whitelist: true,
      forbidNonWhitelisted: false,
      exceptionFactory: (errors) => new ValidationFailure(describe(errors)),
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    try {
      return await super.transform(value, metadata);
    } catch (error) {
      if (!(error instanceof ValidationFailure)) throw error;
      if (metadata.type === 'query') throw new HttpError(400, `Failed to deserialize query string: ${error.message}`);
      throw new HttpError(422, `Failed to deserialize the JSON body into the target type: ${error.message}`);
    }
  }
}
