import { ApiProperty } from '@nestjs/swagger';

export class ErrorResponseDto {
  @ApiProperty({ example: 'vm not found' }) error!: string;
  @ApiProperty({ example: false }) success!: false;
}
