import { Injectable } from '@nestjs/common';
import { AggregateRepository, stepContext, type CommandContext } from '@arbor/application';
import { conflict, Image, ImageName } from '@arbor/domain';

/** A reservation whose image was never requested this long after is an API that died in between: its name is free. */
const ABANDONED_AFTER_MS = 10 * 60_000;

/**
 * Image names in an org (`imagename-<org>-<name>`): one image holds a name from before its
 * request is appended until it fails or is deleted. A holder found finished (failed or deleted
 * with its release never appended, or never requested long after) is taken over.
 */
@Injectable()
export class ImageNames {
  constructor(private readonly aggregates: AggregateRepository) {}

  /** Refuses (409, saying why) a name held by a built image or an unfinished job; null otherwise, or the finished holder to replace. */
  async check(org_id: string, image_name: string, image_id: string | null = null): Promise<string | null> {
    const { state } = await this.aggregates.load(ImageName, { org_id, image_name });
    // Free, or already this image's (a retry of the same request).
    if (state.holder === null || state.holder === image_id) return null;
    const holder = (await this.aggregates.load(Image, state.holder)).state;
    switch (holder.status) {
      case 'pending':
      case 'creating':
        throw conflict(`image '${image_name}' is still being created (a job for that name is unfinished)`);
      case 'completed':
        throw conflict(`image '${image_name}' already exists`);
      case 'none':
        if (Date.now() - Date.parse(state.reserved_at!) < ABANDONED_AFTER_MS) throw conflict(`image '${image_name}' is being created`);
        return state.holder;
      default:
        return state.holder;
    }
  }

  /** Reserves the name for the image (409 when taken meanwhile). */
  async reserve(org_id: string, image_name: string, image_id: string, context: CommandContext): Promise<void> {
    const replacing = await this.check(org_id, image_name, image_id);
    await this.aggregates.handle(ImageName, { org_id, image_name }, { type: 'ReserveImageName', org_id, image_name, image_id, replacing, now: new Date().toISOString() }, stepContext(context, 'reserve-name'));
  }

  /** Lets go of the name (the image failed or was deleted). */
  async release(org_id: string, image_name: string, image_id: string, context: CommandContext): Promise<void> {
    await this.aggregates.handle(ImageName, { org_id, image_name }, { type: 'ReleaseImageName', image_id, now: new Date().toISOString() }, stepContext(context, 'release-name'));
  }
}
