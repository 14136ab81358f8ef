import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined, IsOptional, IsString, IsUUID } from 'class-validator';

/** The host name is checked by the domain's rule (RFC 1123: a 400 that says why), not as a shape error. */
export class CreateDomainRequestDto {
  @ApiProperty({ format: 'uuid', description: 'The VM the edge routes the name to (of the caller\'s org)' })
  @IsDefined({ message: 'missing field `vm_id`' }) @IsUUID('all', { message: 'vm_id must be a UUID' })
  vm_id!: string;

  @ApiProperty({ description: 'A host name (RFC 1123), e.g. app.example.com; stored lowercase. Unique across the installation', example: 'app.example.com' })
  @IsDefined({ message: 'missing field `domain`' }) @IsString({ message: 'domain must be a string' })
  domain!: string;
}

export class DomainResponseDto {
  @ApiProperty({ format: 'uuid' }) domain_id!: string;
  @ApiProperty({ format: 'uuid' }) vm_id!: string;
  @ApiProperty() domain!: string;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
}

export class DeleteDomainResponseDto {
  @ApiProperty({ format: 'uuid' }) domain_id!: string;
}

export class ListDomainsQueryDto {
  @ApiPropertyOptional({ format: 'uuid', description: 'Only the domains of this VM' })
  @IsOptional() @IsUUID('all', { message: 'vm_id must be a UUID' })
  vm_id?: string;
}
