import { invalid, type ImageSource } from '@arbor/domain';
import { parseImageReference } from '@arbor/image-sources';

/** S3's bucket naming rule (3–63 lowercase letters, digits, dots and hyphens). */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** The contract's ImageSourceRequest, checked field by field (a 400 naming what is wrong). */
export function imageSourceOf(source: Record<string, unknown>): ImageSource {
  switch (source.type) {
    case 'docker': {
      if (typeof source.image_ref !== 'string') throw invalid('source.image_ref must be a string (an image reference such as "debian:bookworm")');
      try {
        parseImageReference(source.image_ref);
      } catch (error) {
        throw invalid((error as Error).message);
      }
      return { type: 'docker', image_ref: source.image_ref.trim() };
    }
    case 's3': {
      if (typeof source.bucket !== 'string' || !BUCKET.test(source.bucket)) throw invalid('source.bucket must be an S3 bucket name (3-63 lowercase letters, digits, "." and "-")');
      if (typeof source.key !== 'string' || source.key.length === 0 || source.key.length > 1024) throw invalid('source.key must be an S3 object key (1-1024 characters)');
      return { type: 's3', bucket: source.bucket, key: source.key };
    }
    default:
      throw invalid('source.type must be "docker" or "s3"');
  }
}
