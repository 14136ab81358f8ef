import type { BaseImageInfoDto, BaseImageStatusResponseDto } from '@arbor/contracts';
import type { ImageDocument } from '@arbor/read-models';

/** The contract's BaseImageInfo (job_id and base_image_id are one id: the image's). */
export function presentImage(doc: ImageDocument): BaseImageInfoDto {
  return {
    base_image_id: doc.image_id,
    image_name: doc.image_name,
    owner_id: doc.owner_id,
    is_public: doc.is_public,
    source_type: doc.source_type,
    size_mib: doc.size_mib ?? doc.requested_size_mib,
    created_at: doc.created_at,
    description: doc.description,
  };
}

/**
 * The contract's status: pending → creating → completed | failed (error_message says why); the
 * job's finer stage (downloading, extracting, configuring, creating_disk, creating_snapshot) and
 * how far it has come are Arbor's additions beside it.
 */
export function presentImageStatus(doc: ImageDocument): BaseImageStatusResponseDto {
  return {
    image_name: doc.image_name,
    status: doc.status,
    size_mib: doc.size_mib ?? doc.requested_size_mib,
    ...(doc.status === 'failed' ? { error_message: doc.error_message } : {}),
    stage: doc.stage,
    stage_detail: doc.stage_detail,
    base_image_id: doc.image_id,
  };
}
