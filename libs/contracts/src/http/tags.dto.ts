import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined, IsOptional, IsString, IsUUID, Length, ValidateIf } from 'class-validator';

export class CreateCommitTagRequestDto {
  /** The naming rule is the domain's (a 400 from the command), not a shape error. */
  @ApiProperty({ description: 'Letters, digits, "-", "_", "."; 1-64 characters', pattern: '^[A-Za-z0-9._-]{1,64}$' })
  @IsDefined({ message: 'missing field `tag_name`' }) @IsString()
  tag_name!: string;

  @ApiProperty({ format: 'uuid' })
  @IsDefined({ message: 'missing field `commit_id`' }) @IsUUID('all', { message: 'commit_id must be a UUID' })
  commit_id!: string;

  @ApiPropertyOptional({ type: String, nullable: true })
  @IsOptional() @IsString() @Length(0, 4096)
  description?: string | null;
}

export class CreateCommitTagResponseDto {
  @ApiProperty({ format: 'uuid' }) tag_id!: string;
  @ApiProperty() tag_name!: string;
  @ApiProperty({ format: 'uuid' }) commit_id!: string;
}

export class TagInfoDto {
  @ApiProperty({ format: 'uuid' }) tag_id!: string;
  @ApiProperty() tag_name!: string;
  @ApiProperty({ format: 'uuid' }) commit_id!: string;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  @ApiProperty({ format: 'date-time' }) updated_at!: string;
  @ApiPropertyOptional({ type: String, nullable: true }) description!: string | null;
}

export class ListTagsResponseDto {
  @ApiProperty({ type: [TagInfoDto] }) tags!: TagInfoDto[];
}

/** `description`: absent leaves it, null clears it, a string sets it. */
export class UpdateCommitTagRequestDto {
  @ApiPropertyOptional({ type: String, format: 'uuid', nullable: true, description: 'Move the tag to this commit' })
  @IsOptional() @IsUUID('all', { message: 'commit_id must be a UUID' })
  commit_id?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, description: 'null clears the description' })
  @ValidateIf((_, value) => value !== undefined && value !== null) @IsString() @Length(0, 4096)
  description?: string | null;
}
