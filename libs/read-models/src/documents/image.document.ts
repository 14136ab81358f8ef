/**
 * Collection `images`: one document per image job, `_id` = image id, from its request on; a
 * deleted image's document is removed. `status` is the contract's (pending, creating, completed,
 * failed), `stage` the job's finer step.
 */
export const IMAGES_COLLECTION = 'images';

export interface ImageDocument {
  _id: string;
  image_id: string;
  org_id: string;
  owner_id: string;
  image_name: string;
  source_type: 'docker' | 's3' | 'upload' | 'manual';
  status: 'pending' | 'creating' | 'completed' | 'failed';
  stage: string;
  stage_detail: string | null;
  error_message: string | null;
  /** As asked (what size_rule says it means). */
  requested_size_mib: number;
  /** The disk a VM of it gets, once built. */
  size_mib: number | null;
  is_public: boolean;
  description: string | null;
  created_at: string;
  completed_at: string | null;
  /** The worker whose host holds it. */
  worker_id: string | null;
  [field: string]: unknown;
}
