import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';

export class EventFeedQueryDto {
  @ApiPropertyOptional({ description: 'Return events after this log position (exclusive); omit to start at the beginning', minimum: -1 })
  @IsOptional() @Type(() => Number) @IsInt() @Min(-1)
  after?: number;

  @ApiPropertyOptional({ description: 'Page size (default 100, at most 1000)', minimum: 1, maximum: 1000 })
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(1000)
  limit?: number;

  @ApiPropertyOptional({ description: 'Only events of this type' })
  @IsOptional() @IsString()
  type?: string;
}

export class EventMetadataDto {
  @ApiProperty() schema_version!: number;
  @ApiProperty({ format: 'uuid' }) correlation_id!: string;
  @ApiProperty() causation_id!: string;
  @ApiProperty({ type: String, nullable: true }) actor_key_id!: string | null;
  @ApiProperty({ type: String, nullable: true }) org_id!: string | null;
}

export class EventDto {
  @ApiProperty({ description: 'Position in the global log' }) position!: number;
  @ApiProperty({ example: 'vm-…' }) stream_id!: string;
  @ApiProperty() revision!: number;
  @ApiProperty({ format: 'uuid' }) event_id!: string;
  @ApiProperty({ example: 'VmCreationRequested' }) type!: string;
  @ApiProperty({ type: 'object', additionalProperties: true }) data!: unknown;
  @ApiProperty({ type: EventMetadataDto }) metadata!: EventMetadataDto;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
}

export class EventFeedResponseDto {
  @ApiProperty({ type: [EventDto] }) events!: EventDto[];
  @ApiProperty({ description: 'Pass as `after` to read the next page' }) next_after!: number;
  @ApiProperty({ description: 'False when the end of the log was reached' }) has_more!: boolean;
}

export class EventTypeDto {
  @ApiProperty({ example: 'VmCreationRequested' }) type!: string;
  @ApiProperty({ description: 'The aggregate whose streams hold it', example: 'Vm' }) aggregate!: string;
  @ApiProperty({ description: 'Its streams are `<category>-<key>`', example: 'vm' }) category!: string;
  @ApiProperty({ description: 'The version events of this type are written at; older ones are upcast when read' }) schema_version!: number;
  @ApiProperty({ type: String, nullable: true }) description!: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'JSON Schema of the event\'s `data`, also in the components as `<type>EventData`' })
  schema!: object;
}

export class EventCatalogueResponseDto {
  @ApiProperty({ type: [EventTypeDto] }) types!: EventTypeDto[];
}
