import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Allow } from 'class-validator';

/*
 * Arbor's own account endpoints under `/arbor/v1` (outside the Vers paths): the caller, their
 * keys, their org's members. Values are checked by the handlers (a 400 that says what is wrong).
 */

export class WhoAmIDto {
  @ApiProperty({ format: 'uuid' }) user_id!: string;
  @ApiProperty({ type: String, nullable: true, description: 'Null for the first start\'s admin' }) email!: string | null;
  @ApiProperty({ format: 'uuid' }) org_id!: string;
  @ApiProperty() org_name!: string;
  @ApiProperty({ enum: ['owner', 'admin', 'member'] }) role!: string;
  @ApiProperty({ format: 'uuid', description: 'The key this request was made with' }) api_key_id!: string;
  @ApiProperty({ description: 'An operator key reads every org\'s events' }) is_operator!: boolean;
}

export class ApiKeyInfoDto {
  @ApiProperty({ format: 'uuid' }) api_key_id!: string;
  @ApiProperty() label!: string;
  @ApiProperty({ format: 'uuid' }) user_id!: string;
  @ApiProperty({ type: String, nullable: true }) email!: string | null;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'The first use in the last hour the key was used in (recorded once an hour)' }) last_used_at!: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) revoked_at!: string | null;
  @ApiProperty() is_operator!: boolean;
}

export class ListApiKeysResponseDto {
  @ApiProperty({ type: [ApiKeyInfoDto], description: "A member's own keys; an owner's or admin's: every key of the org. Oldest first" }) api_keys!: ApiKeyInfoDto[];
}

export class CreateApiKeyRequestDto {
  @ApiProperty({ type: String, description: '5 to 100 characters', example: 'ci-deploy' }) @Allow() label!: unknown;
}

export class CreatedApiKeyDto {
  @ApiProperty({ description: 'The key, shown in this answer only' }) api_key!: string;
  @ApiProperty({ format: 'uuid' }) api_key_id!: string;
  @ApiProperty() label!: string;
  @ApiProperty({ format: 'uuid' }) org_id!: string;
  @ApiProperty({ format: 'uuid' }) user_id!: string;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
}

export class OrgInfoDto {
  @ApiProperty({ format: 'uuid' }) org_id!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  @ApiProperty({ enum: ['owner', 'admin', 'member'], description: "The caller's role" }) role!: string;
}

export class OrgMemberDto {
  @ApiProperty({ format: 'uuid' }) user_id!: string;
  @ApiProperty({ type: String, nullable: true }) email!: string | null;
  @ApiProperty({ description: 'Whether they have followed a sign-in link yet' }) email_verified!: boolean;
  @ApiProperty({ enum: ['owner', 'admin', 'member'] }) role!: string;
  @ApiProperty({ format: 'date-time' }) added_at!: string;
}

export class ListOrgMembersResponseDto {
  @ApiProperty({ type: [OrgMemberDto] }) members!: OrgMemberDto[];
}

export class InviteMemberRequestDto {
  @ApiProperty({ type: String, example: 'grace@example.com' }) @Allow() email!: unknown;
  @ApiPropertyOptional({ enum: ['owner', 'admin', 'member'], default: 'member' }) @Allow() role?: unknown;
}

export class ChangeMemberRoleRequestDto {
  @ApiProperty({ enum: ['owner', 'admin', 'member'] }) @Allow() role!: unknown;
}
