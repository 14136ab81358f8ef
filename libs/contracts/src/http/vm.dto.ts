import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsDefined, IsIn, IsInt, IsObject, IsOptional, IsString, Length, Matches, Max, Min, ValidateNested } from 'class-validator';
import { IsStringMap } from './is-string-map.validator';

export const VM_STATES = ['booting', 'running', 'paused', 'sleeping', 'dead'] as const;
export type VmStateValue = (typeof VM_STATES)[number];

/** `VmCreateVmConfig`: every field optional; defaults are applied by the server. */
export class VmCreateVmConfigDto {
  @ApiPropertyOptional({ type: 'integer', description: 'vCPUs (default 1)', minimum: 1, maximum: 64, nullable: true })
  @IsOptional() @IsInt() @Min(1) @Max(64)
  vcpu_count?: number | null;

  @ApiPropertyOptional({ type: 'integer', description: 'Memory in MiB (default 512)', minimum: 64, maximum: 262144, nullable: true })
  @IsOptional() @IsInt() @Min(64) @Max(262144)
  mem_size_mib?: number | null;

  @ApiPropertyOptional({ type: 'integer', description: 'Root filesystem size in MiB (default 1024)', minimum: 256, maximum: 1048576, nullable: true })
  @IsOptional() @IsInt() @Min(256) @Max(1048576)
  fs_size_mib?: number | null;

  @ApiPropertyOptional({ type: String, description: 'Base image: "default" or an image of yours or a public one', nullable: true })
  @IsOptional() @IsString() @Length(1, 128) @Matches(/^[A-Za-z0-9._-]+$/, { message: 'image_name may hold only letters, digits, ".", "_" and "-"' })
  image_name?: string | null;

  @ApiPropertyOptional({ type: String, description: 'Kernel name ("default.bin")', nullable: true })
  @IsOptional() @IsString() @Length(1, 128)
  kernel_name?: string | null;

  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' }, nullable: true })
  @IsOptional() @IsStringMap()
  labels?: Record<string, string> | null;
}

export class NewRootRequestDto {
  @ApiProperty({ type: VmCreateVmConfigDto })
  @IsDefined({ message: 'missing field `vm_config`' }) @IsObject() @ValidateNested() @Type(() => VmCreateVmConfigDto)
  vm_config!: VmCreateVmConfigDto;
}

export class NewVmResponseDto {
  @ApiProperty({ format: 'uuid' }) vm_id!: string;
}

export class VmDto {
  @ApiProperty({ format: 'uuid' }) vm_id!: string;
  @ApiProperty({ format: 'uuid', description: 'The API key that created the VM' }) owner_id!: string;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  @ApiProperty({ enum: VM_STATES }) state!: VmStateValue;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, nullable: true }) labels!: Record<string, string> | null;
}

export class VmMetadataResponseDto {
  @ApiProperty({ format: 'uuid' }) vm_id!: string;
  @ApiProperty({ format: 'uuid' }) owner_id!: string;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  @ApiProperty({ enum: VM_STATES }) state!: VmStateValue;
  @ApiProperty({ description: 'IPv6 address' }) ip!: string;
  @ApiPropertyOptional({ type: String, format: 'uuid', nullable: true }) parent_commit_id!: string | null;
  @ApiPropertyOptional({ type: String, format: 'uuid', nullable: true }) grandparent_vm_id!: string | null;
  @ApiPropertyOptional({ type: String, format: 'date-time', nullable: true }) deleted_at!: string | null;
}

export class UpdateVmStateRequestDto {
  @ApiProperty({ enum: ['Paused', 'Running'] })
  @IsDefined({ message: 'missing field `state`' }) @IsIn(['Paused', 'Running'], { message: 'state must be "Paused" or "Running"' })
  state!: 'Paused' | 'Running';
}

/** `labels` is optional and nullable in the contract: absent clears like null (serde's Option). */
export class UpdateVmLabelsRequestDto {
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' }, nullable: true, description: 'Replaces the labels; null or absent clears them' })
  @IsOptional() @IsStringMap()
  labels?: Record<string, string> | null;
}

export class VmDeleteResponseDto {
  @ApiProperty({ format: 'uuid' }) vm_id!: string;
}
