import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsDefined, IsObject, IsOptional, IsString, ValidateNested } from 'class-validator';

/** `DeploySettings`: each step optional (blank is none); the rules (lengths, the directory) answer 400. */
export class DeploySettingsDto {
  @ApiPropertyOptional({ type: String, nullable: true, description: 'Run first, in the working directory, with `sh -c` (e.g. `npm ci`)' })
  @IsOptional() @IsString({ message: 'settings.install_command must be a string' })
  install_command?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, description: 'Run after the install (e.g. `npm run build`)' })
  @IsOptional() @IsString({ message: 'settings.build_command must be a string' })
  build_command?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, description: 'Started last and kept running, detached (e.g. `npm start`)' })
  @IsOptional() @IsString({ message: 'settings.run_command must be a string' })
  run_command?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, description: "Relative to the repository's root (default: the root)" })
  @IsOptional() @IsString({ message: 'settings.working_directory must be a string' })
  working_directory?: string | null;
}

/** `DeployRequest`: `repo` and `branch` are checked by the domain's rules (a 400 that says why), not as shape errors. */
export class DeployRequestDto {
  @ApiProperty({ description: 'A repository of the configured git host, `owner/repo`', example: 'acme/app' })
  @IsDefined({ message: 'missing field `repo`' }) @IsString({ message: 'repo must be a string' })
  repo!: string;

  @ApiPropertyOptional({ type: String, nullable: true, description: "The project's name, unique in the org (default: the repository's name)" })
  @IsOptional() @IsString({ message: 'name must be a string' })
  name?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, description: "The branch to deploy (default: the repository's default branch)" })
  @IsOptional() @IsString({ message: 'branch must be a string' })
  branch?: string | null;

  @ApiPropertyOptional({ type: DeploySettingsDto, nullable: true })
  @IsOptional() @IsObject({ message: 'settings must be an object' }) @ValidateNested() @Type(() => DeploySettingsDto)
  settings?: DeploySettingsDto | null;
}

export class DeployResponseDto {
  @ApiProperty({ format: 'uuid' }) project_id!: string;
  @ApiProperty({ format: 'uuid', description: 'The VM the project is deployed into (the CLI makes it its HEAD)' }) vm_id!: string;
  @ApiProperty({ description: 'The project\'s status: `cloning` when accepted (see GET /arbor/v1/projects/{id})' }) status!: string;
}

export class ProjectSettingsDto {
  @ApiProperty({ type: String, nullable: true }) install_command!: string | null;
  @ApiProperty({ type: String, nullable: true }) build_command!: string | null;
  @ApiProperty({ type: String, nullable: true }) run_command!: string | null;
  @ApiProperty({ type: String, nullable: true }) working_directory!: string | null;
}

/** One step's exec: its id, whose output `GET /api/v1/vm/{vm_id}/logs` shows. */
export class ProjectStepDto {
  @ApiProperty({ enum: ['install', 'build', 'run'] }) step!: string;
  @ApiProperty({ format: 'uuid' }) exec_id!: string;
  @ApiProperty() command!: string;
  @ApiProperty({ format: 'date-time' }) started_at!: string;
}

export class ProjectDto {
  @ApiProperty({ format: 'uuid' }) project_id!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ description: '`owner/repo`' }) repo!: string;
  @ApiProperty() branch!: string;
  @ApiProperty({ description: 'The commit deployed (the branch head when asked for, then the one cloned)' }) commit_sha!: string;
  @ApiProperty({ format: 'uuid' }) vm_id!: string;
  @ApiProperty({
    enum: ['cloning', 'installing', 'building', 'starting', 'running', 'ready', 'failed', 'stopped', 'deleted'],
    description: '`ready`: every step succeeded and there is nothing to run; `stopped`: the run command exited with 0; `deleted`: the VM is gone',
  })
  status!: string;
  @ApiProperty({ type: String, nullable: true, description: 'Why it failed or stopped' }) reason!: string | null;
  @ApiProperty({ description: 'Where the repository is in the VM' }) directory!: string;
  @ApiProperty({ description: 'Where the steps run' }) working_dir!: string;
  @ApiProperty({ type: ProjectSettingsDto }) settings!: ProjectSettingsDto;
  @ApiProperty({ type: [ProjectStepDto], description: 'The steps started so far, in order' }) steps!: ProjectStepDto[];
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  @ApiProperty({ format: 'date-time' }) updated_at!: string;
}

export class ListProjectsResponseDto {
  @ApiProperty({ type: [ProjectDto] }) projects!: ProjectDto[];
}
