import { Inject, Injectable } from '@nestjs/common';
import { notFound } from '@arbor/domain';
import { IMAGES_COLLECTION, READ_MODEL_STORE, type Filter, type ImageDocument, type ReadModelStore } from '@arbor/read-models';

export interface ImagePage {
  limit: number;
  offset: number;
}

/**
 * Reads of the `images` read model. An org sees its own images and jobs, and the built images
 * other orgs made public; anything else of another org answers like a missing one.
 */
@Injectable()
export class ImageReadModel {
  constructor(@Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore) {}

  /** Built images the org may boot: its own and public ones, newest first. */
  async list(org_id: string, page: ImagePage): Promise<{ images: ImageDocument[]; total: number }> {
    const filter: Filter = { status: 'completed', $or: [{ org_id }, { is_public: true }] };
    const [images, total] = await Promise.all([
      this.readModels.find<ImageDocument>(IMAGES_COLLECTION, filter, { sort: { created_at: -1, _id: 1 }, skip: page.offset, limit: page.limit }),
      this.readModels.count(IMAGES_COLLECTION, filter),
    ]);
    return { images, total };
  }

  /** The newest job of the name in the org (any status), else a public built image of that name. */
  async statusOf(org_id: string, image_name: string): Promise<ImageDocument> {
    const [own] = await this.readModels.find<ImageDocument>(IMAGES_COLLECTION, { org_id, image_name }, { sort: { created_at: -1, _id: 1 }, limit: 1 });
    const found = own ?? (await this.publicImage(image_name));
    if (!found) throw notFound('image');
    return found;
  }

  /** What new_root boots for a name: the org's own built image, else a public one (the newest), else null. */
  async bootable(org_id: string, image_name: string): Promise<ImageDocument | null> {
    const own = await this.readModels.findOne<ImageDocument>(IMAGES_COLLECTION, { org_id, image_name, status: 'completed' });
    return own ?? (await this.publicImage(image_name));
  }

  /** An image by id as the org sees it: its own (any status), or another org's public built image. */
  async get(org_id: string, image_id: string): Promise<ImageDocument> {
    const image = await this.readModels.findOne<ImageDocument>(IMAGES_COLLECTION, { _id: image_id });
    if (!image || (image.org_id !== org_id && !(image.is_public && image.status === 'completed'))) throw notFound('image');
    return image;
  }

  private async publicImage(image_name: string): Promise<ImageDocument | null> {
    const [image] = await this.readModels.find<ImageDocument>(IMAGES_COLLECTION, { image_name, status: 'completed', is_public: true }, { sort: { created_at: -1, _id: 1 }, limit: 1 });
    return image ?? null;
  }
}
