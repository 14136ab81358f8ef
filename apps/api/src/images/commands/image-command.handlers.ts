import { Inject } from '@nestjs/common';
import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { rm } from 'node:fs/promises';
import { AggregateRepository, ARBOR_CONFIG, ProjectionWaiter, stepContext, uploadTreeOf, type ArborConfig } from '@arbor/application';
import { IMAGE_EXTRA_SIZE_RANGE, IMAGE_UPLOAD_SIZE_RANGE, type BaseImageInfoDto, type CreateBaseImageResponseDto, type DeleteBaseImageResponseDto } from '@arbor/contracts';
import { deterministicUuid, forbidden, Image, invalid, notFound, requireImageName, type ImageSizeRule, type ImageSource } from '@arbor/domain';
import type { RequestContext } from '../../auth/request-context.decorator';
import { ImageNames } from '../image-names';
import { presentImage } from '../image-presenter';
import { ImageReadModel } from '../image-read-model';
import { receiveUpload } from '../image-upload-receiver';
import { CreateImageCommand, DeleteImageCommand, SetImageVisibilityCommand, UploadImageCommand } from './image-commands';
import { imageSourceOf } from './image-source-request';

/** size_mib within the contract's range, or a 400 that says it. */
function sizeWithin(size_mib: number | undefined, range: { min: number; max: number; default: number }): number {
  const size = size_mib ?? range.default;
  if (!Number.isInteger(size) || size < range.min || size > range.max) throw invalid(`size_mib must be a whole number from ${range.min} to ${range.max}`);
  return size;
}

/**
 * Asks for an image: reserves its name (409 while the org has a built image or an unfinished job
 * of that name), appends ImageCreationRequested and answers once the status endpoint shows the
 * job. A worker builds it (apps/vm-worker/src/image-builder.ts). The job id is the image's id.
 */
abstract class ImageRequester {
  constructor(
    protected readonly aggregates: AggregateRepository,
    protected readonly names: ImageNames,
    protected readonly projection: ProjectionWaiter,
  ) {}

  protected async request(context: RequestContext, image_id: string, image_name: string, source: ImageSource, size_mib: number, size_rule: ImageSizeRule, description: string | null): Promise<CreateBaseImageResponseDto> {
    const org_id = context.principal.org_id;
    await this.names.reserve(org_id, image_name, image_id, context.command);
    const command = { type: 'RequestImageCreation' as const, image_id, org_id, owner_id: context.principal.key_id, image_name, source, size_mib, size_rule, description, now: new Date().toISOString() };
    const { position } = await this.aggregates.handle(Image, image_id, command, stepContext(context.command, 'request'));
    await this.projection.waitFor(position);
    return { job_id: image_id, image_name, status: 'creating' };
  }
}

@CommandHandler(CreateImageCommand)
export class CreateImageHandler extends ImageRequester implements ICommandHandler<CreateImageCommand> {
  // Its own constructor: Nest reads what to inject from the decorated class's parameters.
  constructor(aggregates: AggregateRepository, names: ImageNames, projection: ProjectionWaiter) {
    super(aggregates, names, projection);
  }

  async execute({ context, body }: CreateImageCommand): Promise<CreateBaseImageResponseDto> {
    const image_name = requireImageName(body.image_name);
    const source = imageSourceOf(body.source);
    const size_mib = sizeWithin(body.size_mib, IMAGE_EXTRA_SIZE_RANGE);
    const image_id = deterministicUuid(context.command.command_id, 'image');
    return this.request(context, image_id, image_name, source, size_mib, 'extra', body.description ?? null);
  }
}

@CommandHandler(UploadImageCommand)
export class UploadImageHandler extends ImageRequester implements ICommandHandler<UploadImageCommand> {
  constructor(
    aggregates: AggregateRepository,
    names: ImageNames,
    projection: ProjectionWaiter,
    @Inject(ARBOR_CONFIG) private readonly config: ArborConfig,
  ) {
    super(aggregates, names, projection);
  }

  /**
   * Checks the name before reading the body (a 409 costs no upload), unpacks the tarball into the
   * upload directory as it arrives (413 over the cap: nothing kept, no job), then asks for the
   * image. The tree waits there for the worker, which builds from it and deletes it when the job
   * ends.
   */
  async execute({ context, image_name: name, size_mib: size, upload }: UploadImageCommand): Promise<CreateBaseImageResponseDto> {
    const image_name = requireImageName(name);
    const size_mib = sizeWithin(size, IMAGE_UPLOAD_SIZE_RANGE);
    const image_id = deterministicUuid(context.command.command_id, 'image');
    await this.names.check(context.principal.org_id, image_name, image_id);
    const { uploadDir, archiveMaxBytes, rootfsMaxBytes, rootfsMaxEntries } = this.config.images;
    const tree = uploadTreeOf(uploadDir, image_id);
    const jobExists = async () => (await this.aggregates.load(Image, image_id)).state.status !== 'none';
    const { bytes } = await receiveUpload(upload, tree, { maxBytes: archiveMaxBytes, rootfsMaxBytes, rootfsMaxEntries }, jobExists);
    try {
      return await this.request(context, image_id, image_name, { type: 'upload', upload_id: image_id, bytes }, size_mib, 'total', null);
    } catch (error) {
      // No job took it: it is not kept.
      if (!(await jobExists())) await rm(tree, { recursive: true, force: true });
      throw error;
    }
  }
}

@CommandHandler(DeleteImageCommand)
export class DeleteImageHandler implements ICommandHandler<DeleteImageCommand> {
  constructor(
    private readonly aggregates: AggregateRepository,
    private readonly names: ImageNames,
    private readonly projection: ProjectionWaiter,
  ) {}

  /**
   * Another org's image is a 404, or a 403 when it is public (the caller sees it, and does not own
   * it). The role rule inside the org is the ChangeGuard's. 409 while its job runs or VMs use it.
   */
  async execute({ context, image_id }: DeleteImageCommand): Promise<DeleteBaseImageResponseDto> {
    const org_id = context.principal.org_id;
    const { state } = await this.aggregates.load(Image, image_id);
    if (state.status === 'none' || state.status === 'deleted') throw notFound('image');
    if (state.org_id !== org_id) {
      if (state.is_public && state.status === 'completed') throw forbidden('Forbidden: this image belongs to another org; only its owner deletes it');
      throw notFound('image');
    }
    const { position } = await this.aggregates.handle(Image, image_id, { type: 'DeleteImage', now: new Date().toISOString() }, stepContext(context.command, 'delete'));
    await this.names.release(org_id, state.image_name!, image_id, context.command);
    await this.projection.waitFor(position);
    return { deleted: true, base_image_id: image_id };
  }
}

@CommandHandler(SetImageVisibilityCommand)
export class SetImageVisibilityHandler implements ICommandHandler<SetImageVisibilityCommand> {
  constructor(
    private readonly aggregates: AggregateRepository,
    private readonly projection: ProjectionWaiter,
    private readonly images: ImageReadModel,
  ) {}

  async execute({ context, image_id, is_public }: SetImageVisibilityCommand): Promise<BaseImageInfoDto> {
    const org_id = context.principal.org_id;
    const { state } = await this.aggregates.load(Image, image_id);
    if (state.org_id !== org_id || state.status !== 'completed') throw notFound('image');
    const { position } = await this.aggregates.handle(Image, image_id, { type: 'SetImageVisibility', is_public, now: new Date().toISOString() }, stepContext(context.command, 'visibility'));
    await this.projection.waitFor(position);
    return presentImage(await this.images.get(org_id, image_id));
  }
}
