import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsArray, IsBoolean, IsDefined, IsIn, IsInt, IsOptional, IsString, IsUUID, Max, Min } from 'class-validator';
import { IsStringMap } from './is-string-map.validator';
import { FitsAProcess } from './process-arguments.validator';

export const EXEC_LOG_STREAMS = ['stdout', 'stderr'] as const;
export type ExecLogStream = (typeof EXEC_LOG_STREAMS)[number];

/** `VmExecRequest`: the body of POST /vm/{id}/exec and /exec/stream. */
export class VmExecRequestDto {
  @ApiProperty({
    type: [String],
    description: 'argv, run without a shell (the CLI sends ["bash","-c","…"]); no NUL bytes, each entry at most 131071 bytes, command, env and working_dir together at most 1 MiB',
  })
  @IsDefined({ message: 'missing field `command`' }) @IsArray() @IsString({ each: true, message: 'command must be an array of strings' }) @FitsAProcess()
  command!: string[];

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    nullable: true,
    description: "Added to the environment of the process; keys non-empty without '=' or NUL, values without NUL",
  })
  @IsOptional() @IsStringMap() @FitsAProcess()
  env?: Record<string, string> | null;

  @ApiPropertyOptional({ type: String, nullable: true, description: 'Working directory in the VM (default /); no NUL bytes, at most 4095 bytes' })
  @IsOptional() @IsString() @FitsAProcess()
  working_dir?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, description: 'UTF-8 text fed to the process, then closed' })
  @IsOptional() @IsString()
  stdin?: string | null;

  @ApiPropertyOptional({ type: 'integer', nullable: true, minimum: 0, description: 'Seconds before the process is killed (exit code 124); 0 or absent: no timeout' })
  @IsOptional() @IsInt() @Min(0) @Max(2 ** 31)
  timeout_secs?: number | null;

  @ApiPropertyOptional({ type: String, format: 'uuid', nullable: true, description: 'Choose the exec id to be able to attach later; an id in use is a 409' })
  @IsOptional() @IsUUID('all')
  exec_id?: string | null;
}

/** `VmExecResponse`: `exec_id` is present only when the client chose one. */
export class VmExecResponseDto {
  @ApiProperty({ format: 'int32' }) exit_code!: number;
  @ApiProperty({ description: 'UTF-8 decoded stdout (lossy)' }) stdout!: string;
  @ApiProperty({ description: 'UTF-8 decoded stderr (lossy)' }) stderr!: string;
  @ApiPropertyOptional({ format: 'uuid' }) exec_id?: string;
}

/** `VmExecStreamAttachRequest`. */
export class VmExecStreamAttachRequestDto {
  @ApiProperty({ format: 'uuid' })
  @IsDefined({ message: 'missing field `exec_id`' }) @IsUUID('all')
  exec_id!: string;

  @ApiPropertyOptional({ type: 'integer', nullable: true, minimum: 0, description: 'Replay chunks with a cursor strictly greater than this; omit for the whole backlog' })
  @IsOptional() @IsInt() @Min(0)
  cursor?: number | null;

  @ApiPropertyOptional({ type: Boolean, nullable: true, description: 'Skip the backlog: only output produced from now on (cursor is ignored)' })
  @IsOptional() @IsBoolean()
  from_latest?: boolean | null;
}

export class VmExecLogsQueryDto {
  @ApiPropertyOptional({
    minimum: 0,
    description: 'Opaque entry offset (not a byte offset): 0 or a next_offset from a previous page. Offsets only grow.',
  })
  @IsOptional() @Type(() => Number) @IsInt() @Min(0)
  offset?: number;

  @ApiPropertyOptional({ minimum: 0, maximum: 1000, description: 'Entries per page (default 100, at most 1000)' })
  @IsOptional() @Type(() => Number) @IsInt() @Min(0)
  max_entries?: number;

  @ApiPropertyOptional({ enum: EXEC_LOG_STREAMS })
  @IsOptional() @IsIn(EXEC_LOG_STREAMS, { message: 'stream must be "stdout" or "stderr"' })
  stream?: ExecLogStream;
}

export class VmExecLogEntryDto {
  @ApiProperty({ type: String, format: 'uuid', nullable: true }) exec_id!: string | null;
  @ApiProperty({ format: 'date-time' }) timestamp!: string;
  @ApiProperty({ enum: EXEC_LOG_STREAMS }) stream!: ExecLogStream;
  @ApiProperty({ description: 'Base64 of the output bytes' }) data_b64!: string;
}

export class VmExecLogResponseDto {
  @ApiProperty({ type: [VmExecLogEntryDto] }) entries!: VmExecLogEntryDto[];
  @ApiProperty({ description: 'Opaque entry offset to pass as `offset` for the next page' }) next_offset!: number;
  @ApiProperty({ description: 'True when no entry is left after this page' }) eof!: boolean;
}
