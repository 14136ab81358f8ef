import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsDefined, IsIn, IsInt, IsOptional, IsString, Length, Max, Min } from 'class-validator';

/** The URL and the event types are checked by the domain's rules (a 400 that names what is wrong), not as a shape error. */
export class RegisterWebhookRequestDto {
  @ApiProperty({ description: 'Absolute http(s) URL, without credentials; at most 2048 characters', example: 'https://hooks.example.com/arbor' })
  @IsDefined({ message: 'missing field `url`' }) @IsString({ message: 'url must be a string' })
  url!: string;

  @ApiPropertyOptional({
    type: [String],
    default: ['*'],
    description: 'Event types of the catalogue (GET /api/v1/events/types) to deliver, or ["*"] (the default) for every type; an empty list is refused',
    example: ['VmBooted', 'VmDeleted'],
  })
  @IsOptional() @IsArray({ message: 'event_types must be an array of event type names' }) @ArrayMaxSize(500) @IsString({ each: true, message: 'event_types must be an array of event type names' })
  event_types?: string[];

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 1024 })
  @IsOptional() @IsString() @Length(0, 1024)
  description?: string | null;
}

export class WebhookDto {
  @ApiProperty({ format: 'uuid' }) webhook_id!: string;
  @ApiProperty() url!: string;
  @ApiProperty({ type: [String], description: 'The event types delivered; ["*"]: every type' }) event_types!: string[];
  @ApiProperty({ type: String, nullable: true }) description!: string | null;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
}

export class RegisteredWebhookDto extends WebhookDto {
  @ApiProperty({
    description: 'The signing secret (Standard Webhooks `whsec_…`), shown only in this answer: every delivery carries `webhook-signature: v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">` made with it',
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  })
  secret!: string;
}

export class ListWebhooksResponseDto {
  @ApiProperty({ type: [WebhookDto] }) webhooks!: WebhookDto[];
}

export const WEBHOOK_DELIVERY_STATUSES = ['retrying', 'delivered', 'failed'] as const;

export class WebhookDeliveriesQueryDto {
  @ApiPropertyOptional({ description: 'Page size (default 50, at most 500)', minimum: 1, maximum: 500 })
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(500)
  limit?: number;

  @ApiPropertyOptional({ description: 'Only deliveries of events before this log position (exclusive): the next page is `before=<last event_position>`' })
  @IsOptional() @Type(() => Number) @IsInt() @Min(0)
  before?: number;

  @ApiPropertyOptional({ enum: WEBHOOK_DELIVERY_STATUSES })
  @IsOptional() @IsIn(WEBHOOK_DELIVERY_STATUSES)
  status?: (typeof WEBHOOK_DELIVERY_STATUSES)[number];
}

export class WebhookDeliveryDto {
  @ApiProperty({ format: 'uuid', description: 'The delivered event (`webhook-id` of the request)' }) event_id!: string;
  @ApiProperty() event_type!: string;
  @ApiProperty({ description: 'The event\'s position in the log' }) event_position!: number;
  @ApiProperty({ enum: WEBHOOK_DELIVERY_STATUSES, description: '`retrying`: an attempt failed and another is due; `delivered`: a 2xx came; `failed`: every attempt failed' })
  status!: (typeof WEBHOOK_DELIVERY_STATUSES)[number];
  @ApiProperty() attempts!: number;
  @ApiProperty({ type: 'integer', nullable: true, description: 'The last answer\'s HTTP status (null: none came)' }) status_code!: number | null;
  @ApiProperty({ type: String, nullable: true, description: 'What went wrong last, with the start of the answer' }) last_error!: string | null;
  @ApiProperty({ format: 'date-time' }) first_attempt_at!: string;
  @ApiProperty({ format: 'date-time' }) last_attempt_at!: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) next_attempt_at!: string | null;
}

export class ListWebhookDeliveriesResponseDto {
  @ApiProperty({ type: [WebhookDeliveryDto], description: 'Newest event first; a delivery shows once its first attempt is recorded' }) deliveries!: WebhookDeliveryDto[];
}
