import { Controller, HttpCode, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ValidateKeyResponseDto } from '@arbor/contracts';
import { AnyMember } from '../auth/changes.decorator';

@ApiTags('keys')
@ApiBearerAuth()
@Controller('api/v1/keys')
export class KeysController {
  /** The guard has already checked the key; reaching here means it is valid. */
  @AnyMember('changes nothing: checks the key')
  @Post('validate')
  @HttpCode(200)
  @ApiOkResponse({ type: ValidateKeyResponseDto })
  validate(): ValidateKeyResponseDto {
    return { valid: true, message: 'API key is valid' };
  }
}
