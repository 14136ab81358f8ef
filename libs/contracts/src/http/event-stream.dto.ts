import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { ArrayMaxSize, IsInt, IsISO8601, IsOptional, IsString, Min } from 'class-validator';

/** How many values one list filter takes (`type`, `stream`, `category`). */
export const MAX_FILTER_VALUES = 100;

/** `type=A&type=B` and `type=A,B` are the same list; empty entries are dropped. */
const toList = ({ value }: { value: unknown }): unknown =>
  value === undefined
    ? undefined
    : (Array.isArray(value) ? value : [value])
        .flatMap((entry) => String(entry).split(','))
        .map((entry) => entry.trim())
        .filter((entry) => entry.length > 0);

const listProperty = (description: string, example: string) =>
  ApiPropertyOptional({ description: `${description}; repeat the parameter or separate values with commas`, type: [String], example: [example] });

/** The filters the live stream and the export share: an event passes when it matches each filter given. */
export class EventFilterQueryDto {
  @listProperty('Only events of these types (see GET /api/v1/events/types)', 'VmBooted')
  @IsOptional() @Transform(toList) @IsString({ each: true }) @ArrayMaxSize(MAX_FILTER_VALUES)
  type?: string[];

  @listProperty('Only events of these streams, by exact id', 'vm-6f1c…')
  @IsOptional() @Transform(toList) @IsString({ each: true }) @ArrayMaxSize(MAX_FILTER_VALUES)
  stream?: string[];

  @listProperty('Only events of streams of these categories (a stream is `<category>-<key>`; the catalogue names each type\'s)', 'vm')
  @IsOptional() @Transform(toList) @IsString({ each: true }) @ArrayMaxSize(MAX_FILTER_VALUES)
  category?: string[];
}

export class EventStreamQueryDto extends EventFilterQueryDto {
  @ApiPropertyOptional({
    description: 'Follow from after this log position (exclusive); omit to start at the beginning. A Last-Event-ID header takes precedence.',
    minimum: -1,
  })
  @IsOptional() @Type(() => Number) @IsInt() @Min(-1)
  after?: number;
}

export class EventExportQueryDto extends EventFilterQueryDto {
  @ApiPropertyOptional({ description: 'Export events after this log position (exclusive); omit to start at the beginning', minimum: -1 })
  @IsOptional() @Type(() => Number) @IsInt() @Min(-1)
  after?: number;

  @ApiPropertyOptional({ description: 'Export events up to this log position (inclusive); omit for the head of the log when the export starts', minimum: -1 })
  @IsOptional() @Type(() => Number) @IsInt() @Min(-1)
  until?: number;

  @ApiPropertyOptional({ description: 'Only events recorded at or after this time (ISO 8601, inclusive)', example: '2025-05-01T00:00:00Z' })
  @IsOptional() @IsISO8601({ strict: true })
  since?: string;

  @ApiPropertyOptional({ description: 'Only events recorded before this time (ISO 8601, exclusive)', example: '2025-05-02T00:00:00Z' })
  @IsOptional() @IsISO8601({ strict: true })
  before?: string;
}
