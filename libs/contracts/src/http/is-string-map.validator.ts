import { registerDecorator, type ValidationOptions } from 'class-validator';

/** A JSON object whose values are all strings (labels, env vars). */
export function IsStringMap(options?: ValidationOptions & { maxEntries?: number }) {
  return (target: object, propertyName: string) =>
    registerDecorator({
      name: 'isStringMap',
      target: target.constructor,
      propertyName,
      options: { message: `${propertyName} must be an object whose values are strings`, ...options },
      validator: {
        validate: (value: unknown) =>
          typeof value === 'object' &&
          value !== null &&
          !Array.isArray(value) &&
          Object.values(value).every((v) => typeof v === 'string') &&
          Object.keys(value).length <= (options?.maxEntries ?? 256),
      },
    });
}
