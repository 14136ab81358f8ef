import { Image } from '@arbor/domain';
import { IMAGES_COLLECTION, type ImageDocument, type WriteOp } from '@arbor/read-models';
import { projectionOf } from './projection';

const set = (image_id: string, fields: Partial<ImageDocument>): WriteOp => ({ op: 'updateOne', collection: IMAGES_COLLECTION, filter: { _id: image_id }, update: { $set: fields } });

/** The `images` read model: GET /images (built images, own and public), the status of a name's newest job, new_root's name lookup. */
export const imagesProjection = projectionOf(Image, {
  name: 'images',
  collections: [IMAGES_COLLECTION],
  indexes: [
    { collection: IMAGES_COLLECTION, keys: { org_id: 1, image_name: 1, created_at: 1 } },
    { collection: IMAGES_COLLECTION, keys: { status: 1, org_id: 1, created_at: 1 } },
    { collection: IMAGES_COLLECTION, keys: { status: 1, is_public: 1, created_at: 1 } },
    { collection: IMAGES_COLLECTION, keys: { image_name: 1, status: 1, is_public: 1 } },
  ],
  project(event): WriteOp[] {
    const image_id = event.data.image_id;
    switch (event.type) {
      case 'ImageCreationRequested': {
        const d = event.data;
        const doc: ImageDocument = {
          _id: image_id,
          image_id,
          org_id: d.org_id,
          owner_id: d.owner_id,
          image_name: d.image_name,
          source_type: d.source.type,
          status: 'pending',
          stage: 'pending',
          stage_detail: null,
          error_message: null,
          requested_size_mib: d.size_mib,
          size_mib: null,
          is_public: false,
          description: d.description,
          created_at: d.requested_at,
          completed_at: null,
          worker_id: null,
        };
        return [{ op: 'replaceOne', collection: IMAGES_COLLECTION, filter: { _id: image_id }, doc, upsert: true }];
      }
      case 'ImageBuildStarted':
        return [set(image_id, { status: 'creating', stage: 'pending', stage_detail: null, worker_id: event.data.worker_id })];
      case 'ImageBuildProgressed':
        return [set(image_id, { stage: event.data.stage, stage_detail: event.data.detail })];
      case 'ImageCreated':
        return [set(image_id, { status: 'completed', stage: 'completed', stage_detail: null, size_mib: event.data.size_mib, completed_at: event.data.created_at })];
      case 'ImageCreationFailed':
        return [set(image_id, { status: 'failed', stage: 'failed', error_message: event.data.reason, completed_at: event.data.failed_at })];
      case 'ImageVisibilityChanged':
        return [set(image_id, { is_public: event.data.is_public })];
      case 'ImageDeleted':
        return [{ op: 'deleteOne', collection: IMAGES_COLLECTION, filter: { _id: image_id } }];
      case 'ImageUsedByVm':
      case 'ImageReleasedByVm':
        return [];
    }
  },
});
