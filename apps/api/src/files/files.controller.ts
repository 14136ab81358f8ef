import { Body, Controller, Get, HttpCode, Param, Put, Query } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOkResponse, ApiPayloadTooLargeResponse, ApiTags } from '@nestjs/swagger';
import { DEFAULT_FILE_MODE, VmFileQueryDto, VmReadFileResponseDto, VmWriteFileRequestDto } from '@arbor/contracts';
import { MAX_FILE_CONTENT_BYTES } from '@arbor/domain';
import { Changes } from '../auth/changes.decorator';
import { Ctx, type RequestContext } from '../auth/request-context.decorator';
import { HttpError } from '../http/http-error';
import { UuidParamPipe } from '../http/uuid-param.pipe';
import { ReadGuestFileCommand } from './commands/read-guest-file.command';
import { WriteGuestFileCommand } from './commands/write-guest-file.command';

const TOO_LARGE = `file content is larger than the limit of ${MAX_FILE_CONTENT_BYTES} bytes (8 MiB)`;

/** `/api/v1/vm/{id}/files`: whole guest files, base64, through the log (see GuestFileOperations). */
@ApiTags('vm')
@ApiBearerAuth()
@Controller('api/v1/vm')
export class FilesController {
  constructor(private readonly commands: CommandBus) {}

  @Get(':vm_id/files')
  @ApiOkResponse({ type: VmReadFileResponseDto })
  @ApiPayloadTooLargeResponse({ description: TOO_LARGE })
  async read(@Ctx() ctx: RequestContext, @Param('vm_id', UuidParamPipe) vmId: string, @Query() query: VmFileQueryDto): Promise<VmReadFileResponseDto> {
    const content = await this.commands.execute(new ReadGuestFileCommand(ctx, vmId, query.path));
    return { content_b64: content.toString('base64') };
  }

  @Changes('vm')
  @Put(':vm_id/files')
  @HttpCode(200)
  @ApiOkResponse({ description: 'Empty body' })
  @ApiPayloadTooLargeResponse({ description: TOO_LARGE })
  async write(@Ctx() ctx: RequestContext, @Param('vm_id', UuidParamPipe) vmId: string, @Body() body: VmWriteFileRequestDto): Promise<void> {
    const content = Buffer.from(body.content_b64, 'base64');
    if (content.length > MAX_FILE_CONTENT_BYTES) throw new HttpError(413, TOO_LARGE);
    await this.commands.execute(new WriteGuestFileCommand(ctx, vmId, body.path, content, body.mode ?? DEFAULT_FILE_MODE, body.create_dirs ?? false));
  }
}
