import { invalid } from '../shared/domain-error';

/**
 * Where a base image's root filesystem comes from: an image in a Docker/OCI registry, a tarball
 * in S3, or a tarball uploaded to the API (kept on disk under its upload id until the job ends).
 */
export type ImageSource =
  | { type: 'docker'; image_ref: string }
  | { type: 's3'; bucket: string; key: string }
  | { type: 'upload'; upload_id: string; bytes: number };

/** The contract's `source_type`: `manual` is an image an operator put on a host by hand (none so far). */
export type ImageSourceType = ImageSource['type'] | 'manual';

/**
 * What `size_mib` means for the image (the contract gives it two meanings): `extra` (images/create)
 * is free space on top of the computed root filesystem size; `total` (images/upload) is the disk's
 * whole size, at least the root filesystem's.
 */
export type ImageSizeRule = 'extra' | 'total';

/** Names of the images every driver has built in: never an image of POST /images (new_root would mean either). */
export const BUILT_IN_IMAGE_NAMES: readonly string[] = ['default'];

/** Image names: what new_root's `image_name` may hold (letters, digits, ".", "_", "-"), 1–128 characters. */
export const IMAGE_NAME_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;

/** The name, or a 400 that says the rule. */
export function requireImageName(image_name: string): string {
  if (!IMAGE_NAME_PATTERN.test(image_name)) throw invalid('image_name may hold only letters, digits, ".", "_" and "-" (1-128 characters)');
  if (BUILT_IN_IMAGE_NAMES.includes(image_name)) throw invalid(`image_name '${image_name}' is the built-in image's name; choose another`);
  return image_name;
}

/** The stages of an image job, in order; `pending` until a worker claims it. */
export const IMAGE_STAGES = ['pending', 'downloading', 'extracting', 'configuring', 'creating_disk', 'creating_snapshot'] as const;
export type ImageStage = (typeof IMAGE_STAGES)[number];
