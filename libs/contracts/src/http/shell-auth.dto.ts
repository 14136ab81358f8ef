import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Allow } from 'class-validator';

/*
 * Shell-auth (`/api/shell-auth…`, no bearer key): the bodies the Vers CLI sends and reads
 * (`vers signup`, `vers login --git`). Fields are taken as sent (@Allow) and checked by the
 * handlers, which answer a bad value with the contract's 400 rather than a 422.
 */

export class ShellAuthStartRequestDto {
  @ApiProperty({ type: String, example: 'ada@example.com' }) @Allow() email!: unknown;
  @ApiProperty({ type: String, example: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl ada@laptop', description: 'One OpenSSH public key line (ed25519, ecdsa, or rsa of 2048 bits or more)' })
  @Allow()
  ssh_public_key!: unknown;
  @ApiPropertyOptional({ type: String, description: 'Free text added to the e-mail (the CLI sends `vers login --git from <host>`); at most 500 characters', example: 'vers login --git from laptop' })
  @Allow()
  body?: unknown;
}

export class ShellAuthStartResponseDto {
  @ApiProperty({ example: true }) success!: true;
  @ApiProperty({ format: 'uuid', description: "The account's id (an account made at verification gets this one)" }) user_id!: string;
  @ApiProperty() email!: string;
  @ApiProperty({ description: 'No account has this address yet: following the link makes one, with an org of its own' }) is_new_user!: boolean;
  @ApiProperty({ format: 'uuid', description: "This sign-in's id" }) nonce!: string;
  @ApiProperty({ description: 'The key as Arbor keeps it (without its comment)' }) ssh_public_key!: string;
  @ApiProperty({ description: 'Always false: every sign-in follows a fresh link (an address and a public key are no secret)' }) already_verified!: boolean;
}

export class ShellAuthKeyRequestDto {
  @ApiProperty({ type: String, example: 'ada@example.com' }) @Allow() email!: unknown;
  @ApiProperty({ type: String }) @Allow() ssh_public_key!: unknown;
}

export class ShellAuthOrgDto {
  @ApiProperty({ format: 'uuid' }) org_id!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ enum: ['owner', 'admin', 'member'] }) role!: string;
}

export class ShellAuthVerifiedDto {
  @ApiProperty({ example: true }) verified!: true;
  @ApiProperty() is_active!: boolean;
  @ApiProperty({ format: 'uuid' }) user_id!: string;
  @ApiProperty({ format: 'uuid', description: "The SSH key's binding to the account" }) key_id!: string;
  @ApiProperty({ type: [ShellAuthOrgDto], description: "The account's orgs, the oldest membership first" }) orgs!: ShellAuthOrgDto[];
}

export class ShellAuthNotVerifiedDto {
  @ApiProperty({ example: false }) verified!: false;
  @ApiProperty({ example: false }) is_active!: false;
  @ApiProperty({ example: 'waiting for the link in the e-mail to be followed' }) reason!: string;
}

export class ShellAuthCreateKeyRequestDto extends ShellAuthKeyRequestDto {
  @ApiProperty({ type: String, description: '5 to 100 characters', example: 'vers-cli-laptop' }) @Allow() label!: unknown;
  @ApiPropertyOptional({ type: String, description: "One of the account's orgs (default: the first)" }) @Allow() org_name?: unknown;
}

export class ShellAuthCreatedKeyDto {
  @ApiProperty({ example: true }) success!: true;
  @ApiProperty({ description: 'The key, shown in this answer only' }) api_key!: string;
  @ApiProperty({ format: 'uuid' }) api_key_id!: string;
  @ApiProperty({ format: 'uuid' }) org_id!: string;
  @ApiProperty() org_name!: string;
}

export class ShellAuthPublicKeyRequestDto {
  @ApiProperty({ type: String }) @Allow() ssh_public_key!: unknown;
}

export class ShellAuthKeyMatchDto {
  @ApiProperty({ format: 'uuid' }) user_id!: string;
  @ApiProperty({ format: 'uuid' }) key_id!: string;
  @ApiProperty() email!: string;
  @ApiProperty() is_active!: boolean;
  @ApiProperty() public_key_verified!: boolean;
  @ApiProperty({ format: 'date-time' }) verified_at!: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'The last sign-in confirmed with the key' }) last_seen_at!: string | null;
}

export class ShellAuthPublicKeyVerifiedDto {
  @ApiProperty({ example: true }) verified!: true;
  @ApiProperty({ example: 1 }) count!: number;
  @ApiProperty({ type: [ShellAuthKeyMatchDto] }) matches!: ShellAuthKeyMatchDto[];
}

export class ShellAuthPublicKeyUnknownDto {
  @ApiProperty({ example: false }) verified!: false;
  @ApiProperty({ example: 'no account has this SSH key' }) reason!: string;
}
