import { Injectable } from '@nestjs/common';
import { BUILT_IN_IMAGE_NAMES, DomainError } from '@arbor/domain';
import { ImageReadModel } from '../images/image-read-model';

/** What a root VM boots: a built image (its id), or the driver's built-in image (no id). */
export interface BootImage {
  image_name: string;
  image_id: string | null;
}

/**
 * Resolves new_root's `image_name` before anything is appended: the caller's org's own built
 * image of that name first, then a public one (the newest), then the built-in image ("default",
 * a name no image may take). Any other name is a 404, as the contract's server answers.
 */
@Injectable()
export class BaseImages {
  constructor(private readonly images: ImageReadModel) {}

  async resolve(org_id: string, image_name: string): Promise<BootImage> {
    const image = await this.images.bootable(org_id, image_name);
    if (image) return { image_name, image_id: image.image_id };
    if (BUILT_IN_IMAGE_NAMES.includes(image_name)) return { image_name, image_id: null };
    throw new DomainError('not_found', `image not found: ${image_name}`);
  }
}
