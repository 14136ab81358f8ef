import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiConsumes, ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  BaseImageStatusResponseDto,
  CreateBaseImageRequestDto,
  CreateBaseImageResponseDto,
  DeleteBaseImageResponseDto,
  ListBaseImagesResponseDto,
  PaginationQueryDto,
  UploadBaseImageQueryDto,
} from '@arbor/contracts';
import { AnyMember, Changes } from '../auth/changes.decorator';
import { Ctx, type RequestContext } from '../auth/request-context.decorator';
import { UuidParamPipe } from '../http/uuid-param.pipe';
import { CreateImageCommand, DeleteImageCommand, UploadImageCommand } from './commands/image-commands';
import { presentImage, presentImageStatus } from './image-presenter';
import { ImageReadModel } from './image-read-model';

/**
 * Base images (the contract's five operations): jobs that build an image from a registry image,
 * an S3 tarball or an uploaded tarball; the built images an org may boot (its own and public
 * ones); a name's status; deletion. `new_root {image_name}` boots them.
 */
@ApiTags('images')
@ApiBearerAuth()
@Controller('api/v1/images')
export class ImagesController {
  constructor(
    private readonly commands: CommandBus,
    private readonly images: ImageReadModel,
  ) {}

  @Get()
  @ApiOkResponse({ type: ListBaseImagesResponseDto, description: 'Built images: the org\'s own and public ones, newest first' })
  async list(@Ctx() ctx: RequestContext, @Query() query: PaginationQueryDto): Promise<ListBaseImagesResponseDto> {
    const page = { limit: Math.min(100, Math.max(1, query.limit ?? 50)), offset: query.offset ?? 0 };
    const { images, total } = await this.images.list(ctx.principal.org_id, page);
    return { images: images.map(presentImage), total, ...page };
  }

  @AnyMember('creates an image of the caller')
  @Post('create')
  @HttpCode(201)
  @ApiCreatedResponse({ type: CreateBaseImageResponseDto, description: '400 for a bad name, source or size; 409 when the org has an image, or an unfinished job, of that name' })
  create(@Ctx() ctx: RequestContext, @Body() body: CreateBaseImageRequestDto): Promise<CreateBaseImageResponseDto> {
    return this.commands.execute(new CreateImageCommand(ctx, body));
  }

  @AnyMember('creates an image of the caller')
  @Post('upload')
  @HttpCode(201)
  @ApiConsumes('multipart/form-data')
  @ApiCreatedResponse({ type: CreateBaseImageResponseDto, description: 'The file part (`file` or `tarball`) is a tar of the root filesystem, optionally gzip or zstd; 413 over the upload cap (nothing is kept)' })
  upload(@Ctx() ctx: RequestContext, @Query() query: UploadBaseImageQueryDto, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<CreateBaseImageResponseDto> {
    return this.commands.execute(new UploadImageCommand(ctx, query.image_name, query.size_mib, { request: request.raw, response: reply.raw }));
  }

  @Get(':image_name/status')
  @ApiOkResponse({ type: BaseImageStatusResponseDto, description: 'The newest job of the name in the org, else a public image of that name' })
  async status(@Ctx() ctx: RequestContext, @Param('image_name') image_name: string): Promise<BaseImageStatusResponseDto> {
    return presentImageStatus(await this.images.statusOf(ctx.principal.org_id, image_name));
  }

  @Changes('image')
  @Delete('images/:base_image_id')
  @HttpCode(200)
  @ApiOkResponse({ type: DeleteBaseImageResponseDto, description: '403 for another org\'s public image (or another member\'s, for a member); 409 while its job runs or VMs use it' })
  delete(@Ctx() ctx: RequestContext, @Param('base_image_id', UuidParamPipe) imageId: string): Promise<DeleteBaseImageResponseDto> {
    return this.commands.execute(new DeleteImageCommand(ctx, imageId));
  }
}
