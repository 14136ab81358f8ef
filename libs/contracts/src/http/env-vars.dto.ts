import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsDefined, IsOptional } from 'class-validator';
import { IsStringMap } from './is-string-map.validator';

/** What a `vars` that is not an object of strings is told: the first key whose value is not a string. */
function varsShapeProblem({ value }: { value: unknown }): string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'vars must be an object of KEY: "value" strings';
  const [key, bad] = Object.entries(value).find(([, v]) => typeof v !== 'string') ?? [];
  return key === undefined ? 'vars must be an object of KEY: "value" strings' : `the value of '${key}' must be a string, not ${bad === null ? 'null' : typeof bad}`;
}

/**
 * `SetEnvVarsRequest`. The rules for keys and values, and how many variables there may be (the
 * set after the change counts), are the domain's: a 400 naming the key, not a shape error.
 */
export class SetEnvVarsRequestDto {
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: 'Keys `^[A-Za-z_][A-Za-z0-9_]*$` (at most 256 characters), values at most 8192 characters, no line break or NUL; the keys `__proto__`, `constructor` and `prototype` are refused',
  })
  // The object as sent: class-transformer's copy silently leaves out keys that name a method of
  // Object.prototype (toString, valueOf, …), which are valid variable names.
  @Transform(({ obj }) => (obj as { vars?: unknown }).vars)
  @IsDefined({ message: 'missing field `vars`' })
  @IsStringMap({ maxEntries: Number.MAX_SAFE_INTEGER, message: varsShapeProblem })
  vars!: Record<string, string>;

  @ApiPropertyOptional({ type: Boolean, nullable: true, default: false, description: 'true: exactly these variables, every other one removed; false (default): upsert' })
  @IsOptional() @IsBoolean({ message: 'replace must be a boolean' })
  replace?: boolean | null;
}

/** `EnvVarsResponse`: the owner's complete set. */
export class EnvVarsResponseDto {
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } })
  vars!: Record<string, string>;
}
