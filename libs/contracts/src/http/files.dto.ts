import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsDefined, IsInt, IsOptional, IsString, Length, Matches, Max, Min } from 'class-validator';
import { IsStrictBase64 } from './is-base64.validator';

/** Default permission bits of a written file: 0o644. */
export const DEFAULT_FILE_MODE = 0o644;

const ABSOLUTE_PATH = /^\/[^\0]*$/;
const PATH_RULE = { message: 'path must be an absolute path without NUL characters' };

/** `GET /vm/{id}/files?path=/abs/path` */
export class VmFileQueryDto {
  @ApiProperty({ description: 'Absolute path of the file in the VM' })
  @IsDefined({ message: 'missing field `path`' }) @IsString() @Length(1, 4096) @Matches(ABSOLUTE_PATH, PATH_RULE)
  path!: string;
}

export class VmReadFileResponseDto {
  @ApiProperty({ format: 'byte', description: 'The whole file, base64' })
  content_b64!: string;
}

/** `PUT /vm/{id}/files`: creates or replaces a file in the VM. */
export class VmWriteFileRequestDto {
  @ApiProperty({ description: 'Absolute path of the file in the VM' })
  @IsDefined({ message: 'missing field `path`' }) @IsString() @Length(1, 4096) @Matches(ABSOLUTE_PATH, PATH_RULE)
  path!: string;

  @ApiProperty({ format: 'byte', description: "The file's content, base64 (at most 8 MiB decoded; more is answered with 413)" })
  @IsDefined({ message: 'missing field `content_b64`' }) @IsString() @IsStrictBase64({ message: 'content_b64 must be valid base64' })
  content_b64!: string;

  @ApiPropertyOptional({ type: 'integer', description: 'Permission bits as a JSON integer (default 420 = 0o644)', minimum: 0, maximum: 0o7777, nullable: true })
  @IsOptional() @IsInt({ message: 'mode must be an integer' }) @Min(0) @Max(0o7777)
  mode?: number | null;

  @ApiPropertyOptional({ type: Boolean, description: 'Create missing parent directories (default false)', nullable: true })
  @IsOptional() @IsBoolean()
  create_dirs?: boolean | null;
}
