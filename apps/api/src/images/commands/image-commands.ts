import { Command } from '@nestjs/cqrs';
import type { BaseImageInfoDto, CreateBaseImageRequestDto, CreateBaseImageResponseDto, DeleteBaseImageResponseDto } from '@arbor/contracts';
import type { RequestContext } from '../../auth/request-context.decorator';
import type { UploadExchange } from '../image-upload-receiver';

/** POST /images/create: a job that builds the image from a registry image or an S3 tarball. */
export class CreateImageCommand extends Command<CreateBaseImageResponseDto> {
  constructor(
    readonly context: RequestContext,
    readonly body: CreateBaseImageRequestDto,
  ) {
    super();
  }
}

/** POST /images/upload: the request's multipart body is the tarball, streamed to disk; then a job as for create. */
export class UploadImageCommand extends Command<CreateBaseImageResponseDto> {
  constructor(
    readonly context: RequestContext,
    readonly image_name: string,
    readonly size_mib: number | undefined,
    readonly upload: UploadExchange,
  ) {
    super();
  }
}

/** DELETE /images/images/{id}: no VM may boot it any more; its files go from its host. */
export class DeleteImageCommand extends Command<DeleteBaseImageResponseDto> {
  constructor(
    readonly context: RequestContext,
    readonly image_id: string,
  ) {
    super();
  }
}

/** PATCH /arbor/v1/images/{id}: public (every org lists and may boot it) or private again. */
export class SetImageVisibilityCommand extends Command<BaseImageInfoDto> {
  constructor(
    readonly context: RequestContext,
    readonly image_id: string,
    readonly is_public: boolean,
  ) {
    super();
  }
}
