import { Body, Controller, HttpCode, Param, Patch } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { BaseImageInfoDto, SetImageVisibilityRequestDto } from '@arbor/contracts';
import { Changes } from '../auth/changes.decorator';
import { Ctx, type RequestContext } from '../auth/request-context.decorator';
import { UuidParamPipe } from '../http/uuid-param.pipe';
import { SetImageVisibilityCommand } from './commands/image-commands';

/**
 * Arbor's addition: an image becomes public (listed to, and bootable by, every org) the way a
 * repository does, by its creator or an owner or admin of its org. The contract has no call for it.
 */
@ApiTags('images')
@ApiBearerAuth()
@Controller('arbor/v1/images')
export class ImageVisibilityController {
  constructor(private readonly commands: CommandBus) {}

  @Changes('image')
  @Patch(':base_image_id')
  @HttpCode(200)
  @ApiOkResponse({ type: BaseImageInfoDto, description: '404 for an image the org does not have, or one not yet built' })
  setVisibility(@Ctx() ctx: RequestContext, @Param('base_image_id', UuidParamPipe) imageId: string, @Body() body: SetImageVisibilityRequestDto): Promise<BaseImageInfoDto> {
    return this.commands.execute(new SetImageVisibilityCommand(ctx, imageId, body.is_public));
  }
}
