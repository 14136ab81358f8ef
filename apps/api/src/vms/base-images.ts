import { DomainError, VM_CONFIG_DEFAULTS } from '@arbor/domain';

/**
 * The base images a root VM may start from. Every driver has only the built-in "default" until
 * base images become a resource of their own (POST /images); any other name is refused before
 * anything is appended, as the contract's server answers an unknown image_name (404).
 */
const BASE_IMAGES = new Set([VM_CONFIG_DEFAULTS.image_name]);

export function requireBaseImage(image_name: string): string {
  if (!BASE_IMAGES.has(image_name)) throw new DomainError('not_found', `image not found: ${image_name}`);
  return image_name;
}
