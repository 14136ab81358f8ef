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
 * Validates bodies and queries at the edge. Input of the wrong shape is a 422 that names the
 * field, as the contract's server does; unknown fields are ignored (stripped), not rejected.
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
      const source = metadata.type === 'query' ? 'query string' : 'JSON body';
      throw new HttpError(422, `Failed to deserialize the ${source} into the target type: ${error.message}`);
    }
  }
}
