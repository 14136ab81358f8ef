import { ApiProperty } from '@nestjs/swagger';

export class SystemVersionDto {
  @ApiProperty({ example: 'orchestrator' }) executable_name!: string;
  @ApiProperty({ example: '0.1.0' }) workspace_version!: string;
  @ApiProperty({ example: '281a76b…' }) git_hash!: string;
}

export class ValidateKeyResponseDto {
  @ApiProperty({ example: true }) valid!: boolean;
  @ApiProperty({ example: 'API key is valid' }) message!: string;
}
