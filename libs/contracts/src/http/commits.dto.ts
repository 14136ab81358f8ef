import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsBoolean, IsDefined, IsInt, IsOptional, IsString, IsUUID, Length, Max, Min } from 'class-validator';

export class VmCommitRequestDto {
  @ApiPropertyOptional({ type: String, format: 'uuid', nullable: true, description: 'Choose the commit id (default: generated)' })
  @IsOptional() @IsUUID('all', { message: 'commit_id must be a UUID' })
  commit_id?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, description: 'Human-readable name (blank: generated)' })
  @IsOptional() @IsString() @Length(0, 256)
  name?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true })
  @IsOptional() @IsString() @Length(0, 4096)
  description?: string | null;
}

export class VmCommitResponseDto {
  @ApiProperty({ format: 'uuid' }) commit_id!: string;
}

export class CommitInfoDto {
  @ApiProperty({ format: 'uuid' }) commit_id!: string;
  @ApiProperty({ format: 'uuid' }) owner_id!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  @ApiProperty() is_public!: boolean;
  @ApiPropertyOptional({ type: String, nullable: true }) description!: string | null;
  @ApiPropertyOptional({ type: String, format: 'uuid', nullable: true }) parent_vm_id!: string | null;
  @ApiPropertyOptional({ type: String, format: 'uuid', nullable: true }) grandparent_commit_id!: string | null;
  @ApiPropertyOptional({ description: 'Arbor extension: whether memory (running processes) was captured, not only the disk' })
  includes_memory?: boolean;
}

/** The parents chain's element: the same data as CommitInfo, with the id in `id`. */
export class VmCommitEntityDto {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ format: 'uuid' }) owner_id!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  @ApiProperty() is_public!: boolean;
  @ApiPropertyOptional({ type: String, nullable: true }) description!: string | null;
  @ApiPropertyOptional({ type: String, format: 'uuid', nullable: true }) parent_vm_id!: string | null;
  @ApiPropertyOptional({ type: String, format: 'uuid', nullable: true }) grandparent_commit_id!: string | null;
}

export class ListCommitsResponseDto {
  @ApiProperty({ type: [CommitInfoDto] }) commits!: CommitInfoDto[];
  @ApiProperty() total!: number;
  @ApiProperty() limit!: number;
  @ApiProperty() offset!: number;
}

/** limit/offset are query parameters (the published OpenAPI wrongly says path). */
export class PaginationQueryDto {
  @ApiPropertyOptional({ minimum: 1, maximum: 100, default: 50, description: 'Clamped to 100' })
  @IsOptional() @Type(() => Number) @IsInt() @Min(0)
  limit?: number;

  @ApiPropertyOptional({ minimum: 0, default: 0 })
  @IsOptional() @Type(() => Number) @IsInt() @Min(0)
  offset?: number;
}

export class UpdateCommitRequestDto {
  @ApiProperty()
  @IsDefined({ message: 'missing field `is_public`' }) @IsBoolean()
  is_public!: boolean;

  @ApiPropertyOptional({ type: String, nullable: true })
  @IsOptional() @IsString() @Length(0, 256)
  name?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true })
  @IsOptional() @IsString() @Length(0, 4096)
  description?: string | null;
}

export class FromCommitVmRequestDto {
  @ApiPropertyOptional({ format: 'uuid', description: 'Exactly one of commit_id, tag_name, ref' })
  @IsOptional() @IsUUID('all', { message: 'commit_id must be a UUID' })
  commit_id?: string;

  @ApiPropertyOptional({ description: 'An org commit tag' })
  @IsOptional() @IsString()
  tag_name?: string;

  @ApiPropertyOptional({ description: 'A repository reference "repo_name:tag_name"' })
  @IsOptional() @IsString()
  ref?: string;
}

export class ResizeVmDiskRequestDto {
  @ApiProperty({ description: 'New size in MiB; must be larger than the current size' })
  @IsDefined({ message: 'missing field `fs_size_mib`' }) @IsInt() @Min(1) @Max(1048576)
  fs_size_mib!: number;
}

export class NewVmsResponseDto {
  @ApiProperty({ type: 'array', items: { type: 'object', properties: { vm_id: { type: 'string', format: 'uuid' } } } })
  vms!: { vm_id: string }[];
  @ApiPropertyOptional({
    description:
      'Arbor extension: true when the children kept the source\'s memory and running processes (qemu); false when only the filesystem was copied and processes start fresh (sandbox)',
  })
  memory_preserved?: boolean;
  @ApiPropertyOptional({ description: 'Only on failure: what went wrong after `vms` were created' })
  error?: string;
}
