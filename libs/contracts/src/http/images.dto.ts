import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsBoolean, IsDefined, IsInt, IsObject, IsOptional, IsString, Length } from 'class-validator';

/** `{"type":"docker","image_ref":…}` or `{"type":"s3","bucket":…,"key":…}`: checked by the handler, which says which field is wrong (400). */
export class ImageSourceRequestDto {
  @ApiProperty({ enum: ['docker', 's3'] }) type!: 'docker' | 's3';
  @ApiPropertyOptional({ description: 'docker: an image reference, e.g. "debian:bookworm", "registry.example.com/team/app:1.2" or "…@sha256:…"' }) image_ref?: string;
  @ApiPropertyOptional({ description: 's3: the bucket' }) bucket?: string;
  @ApiPropertyOptional({ description: 's3: the key of a root filesystem tarball (tar, tar.gz or tar.zst)' }) key?: string;
}

export class CreateBaseImageRequestDto {
  @ApiProperty({ minLength: 1, maxLength: 128, description: 'Unique in the caller\'s org; letters, digits, ".", "_" and "-"' })
  @IsDefined({ message: 'missing field `image_name`' }) @IsString({ message: 'image_name must be a string' })
  image_name!: string;

  @ApiProperty({ type: ImageSourceRequestDto })
  @IsDefined({ message: 'missing field `source`' }) @IsObject({ message: 'source must be an object' })
  source!: Record<string, unknown>;

  @ApiPropertyOptional({ minimum: 0, maximum: 32768, default: 256, description: 'Free space in MiB on top of the computed root filesystem size (0: the smallest image)' })
  @IsOptional() @IsInt({ message: 'size_mib must be a whole number' })
  size_mib?: number;

  @ApiPropertyOptional({ type: String, nullable: true })
  @IsOptional() @IsString() @Length(0, 1024)
  description?: string | null;
}

export class CreateBaseImageResponseDto {
  @ApiProperty({ description: 'The image job; its status is GET /images/{image_name}/status' }) job_id!: string;
  @ApiProperty() image_name!: string;
  @ApiProperty({ example: 'creating' }) status!: string;
}

export class UploadBaseImageQueryDto {
  @ApiProperty({ description: 'The name for the new base image' })
  @IsDefined({ message: 'missing field `image_name`' }) @IsString()
  image_name!: string;

  @ApiPropertyOptional({ minimum: 512, maximum: 32768, default: 512, description: 'The image\'s disk size in MiB (at least the root filesystem\'s)' })
  @IsOptional() @Type(() => Number) @IsInt({ message: 'size_mib must be a whole number' })
  size_mib?: number;
}

export class BaseImageInfoDto {
  @ApiProperty({ format: 'uuid' }) base_image_id!: string;
  @ApiProperty() image_name!: string;
  @ApiProperty({ format: 'uuid', description: 'The API key that created it' }) owner_id!: string;
  @ApiProperty() is_public!: boolean;
  @ApiProperty({ enum: ['docker', 's3', 'upload', 'manual'] }) source_type!: string;
  @ApiProperty({ description: 'The disk a VM of it gets, MiB' }) size_mib!: number;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  @ApiPropertyOptional({ type: String, nullable: true }) description!: string | null;
}

export class ListBaseImagesResponseDto {
  @ApiProperty({ type: [BaseImageInfoDto] }) images!: BaseImageInfoDto[];
  @ApiProperty() total!: number;
  @ApiProperty() limit!: number;
  @ApiProperty() offset!: number;
}

export class BaseImageStatusResponseDto {
  @ApiProperty() image_name!: string;
  @ApiProperty({ description: 'pending, creating, completed or failed; while creating, the job\'s stage (downloading, extracting, configuring, creating_disk, creating_snapshot) is in `stage`' })
  status!: string;
  @ApiProperty() size_mib!: number;
  @ApiPropertyOptional({ type: String, nullable: true }) error_message?: string | null;
  @ApiPropertyOptional({ description: 'Arbor: the job\'s finer stage' }) stage?: string;
  @ApiPropertyOptional({ type: String, nullable: true, description: 'Arbor: how far the stage has come (bytes, layers)' }) stage_detail?: string | null;
  @ApiPropertyOptional({ format: 'uuid', description: 'Arbor: the image (base_image_id)' }) base_image_id?: string;
}

export class DeleteBaseImageResponseDto {
  @ApiProperty() deleted!: boolean;
  @ApiProperty() base_image_id!: string;
}

export class SetImageVisibilityRequestDto {
  @ApiProperty({ description: 'Public images are listed to, and may be booted by, every org of the installation' })
  @IsDefined({ message: 'missing field `is_public`' }) @IsBoolean({ message: 'is_public must be true or false' })
  is_public!: boolean;
}

/** Bounds of the contract's size_mib (checked by the handlers: a 400 that says the range). */
export const IMAGE_EXTRA_SIZE_RANGE = { min: 0, max: 32768, default: 256 } as const;
export const IMAGE_UPLOAD_SIZE_RANGE = { min: 512, max: 32768, default: 512 } as const;
