import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsDefined, IsOptional, IsString, IsUUID, Length, ValidateIf } from 'class-validator';

const NAME_RULE = 'Letters, digits, "-", "_", "."; 1-64 characters';
const NAME_PATTERN = '^[A-Za-z0-9._-]{1,64}$';

/** Names are checked by the domain's rule (a 400 that says it), not as a shape error. */
export class CreateRepositoryRequestDto {
  @ApiProperty({ description: NAME_RULE, pattern: NAME_PATTERN })
  @IsDefined({ message: 'missing field `name`' }) @IsString()
  name!: string;

  @ApiPropertyOptional({ type: String, nullable: true })
  @IsOptional() @IsString() @Length(0, 4096)
  description?: string | null;
}

export class CreateRepositoryResponseDto {
  @ApiProperty({ format: 'uuid' }) repo_id!: string;
  @ApiProperty() name!: string;
}

export class RepositoryInfoDto {
  @ApiProperty({ format: 'uuid' }) repo_id!: string;
  @ApiProperty() name!: string;
  @ApiProperty() is_public!: boolean;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  @ApiPropertyOptional({ type: String, nullable: true }) description!: string | null;
}

export class ListRepositoriesResponseDto {
  @ApiProperty({ type: [RepositoryInfoDto] }) repositories!: RepositoryInfoDto[];
}

export class SetRepositoryVisibilityRequestDto {
  @ApiProperty()
  @IsDefined({ message: 'missing field `is_public`' }) @IsBoolean({ message: 'is_public must be a boolean' })
  is_public!: boolean;
}

export class RepoTagInfoDto {
  @ApiProperty({ format: 'uuid' }) tag_id!: string;
  @ApiProperty() tag_name!: string;
  @ApiProperty({ description: '`<repo_name>:<tag_name>`' }) reference!: string;
  @ApiProperty({ format: 'uuid' }) commit_id!: string;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  @ApiProperty({ format: 'date-time' }) updated_at!: string;
  @ApiPropertyOptional({ type: String, nullable: true }) description!: string | null;
}

export class ListRepoTagsResponseDto {
  @ApiProperty({ description: 'The repository name' }) repository!: string;
  @ApiProperty({ type: [RepoTagInfoDto] }) tags!: RepoTagInfoDto[];
}

export class CreateRepoTagRequestDto {
  @ApiProperty({ description: NAME_RULE, pattern: NAME_PATTERN })
  @IsDefined({ message: 'missing field `tag_name`' }) @IsString()
  tag_name!: string;

  @ApiProperty({ format: 'uuid' })
  @IsDefined({ message: 'missing field `commit_id`' }) @IsUUID('all', { message: 'commit_id must be a UUID' })
  commit_id!: string;

  @ApiPropertyOptional({ type: String, nullable: true })
  @IsOptional() @IsString() @Length(0, 4096)
  description?: string | null;
}

export class CreateRepoTagResponseDto {
  @ApiProperty({ format: 'uuid' }) tag_id!: string;
  @ApiProperty({ description: '`<repo_name>:<tag_name>`' }) reference!: string;
  @ApiProperty({ format: 'uuid' }) commit_id!: string;
}

/** At least one field; `description`: absent leaves it, null clears it, a string sets it. */
export class UpdateRepoTagRequestDto {
  @ApiPropertyOptional({ type: String, format: 'uuid', nullable: true, description: 'Move the tag to this commit' })
  @IsOptional() @IsUUID('all', { message: 'commit_id must be a UUID' })
  commit_id?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, description: 'null clears the description' })
  @ValidateIf((_, value) => value !== undefined && value !== null) @IsString() @Length(0, 4096)
  description?: string | null;
}

export class ForkRepositoryRequestDto {
  @ApiProperty({ description: 'The org that owns the public source repository' })
  @IsDefined({ message: 'missing field `source_org`' }) @IsString()
  source_org!: string;

  @ApiProperty()
  @IsDefined({ message: 'missing field `source_repo`' }) @IsString()
  source_repo!: string;

  @ApiProperty()
  @IsDefined({ message: 'missing field `source_tag`' }) @IsString()
  source_tag!: string;

  @ApiPropertyOptional({ type: String, nullable: true, description: 'Repository in your org (default: source_repo)' })
  @IsOptional() @IsString()
  repo_name?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, description: 'Tag in that repository (default: source_tag)' })
  @IsOptional() @IsString()
  tag_name?: string | null;
}

export class ForkRepositoryResponseDto {
  @ApiProperty({ format: 'uuid' }) vm_id!: string;
  @ApiProperty({ format: 'uuid' }) commit_id!: string;
  @ApiProperty() repo_name!: string;
  @ApiProperty() tag_name!: string;
  @ApiProperty({ description: '`<repo_name>:<tag_name>`' }) reference!: string;
}

export class PublicRepositoryInfoDto {
  @ApiProperty({ format: 'uuid' }) repo_id!: string;
  @ApiProperty() org_name!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ description: '`<org_name>/<name>`' }) full_name!: string;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  @ApiPropertyOptional({ type: String, nullable: true }) description!: string | null;
}

export class ListPublicRepositoriesResponseDto {
  @ApiProperty({ type: [PublicRepositoryInfoDto] }) repositories!: PublicRepositoryInfoDto[];
}
