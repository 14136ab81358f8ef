import { deciderSpec } from '../testing/decider-spec';
import { imageDecider } from './image.decider';
import type { ImageEvent } from './image.events';

const now = '2026-11-26T10:00:00.000Z';
const spec = deciderSpec(imageDecider);
const image_id = 'img-1';
const request = {
  image_id,
  org_id: 'org-1',
  owner_id: 'key-1',
  image_name: 'alpine',
  source: { type: 'docker' as const, image_ref: 'alpine:3.20' },
  size_mib: 256,
  size_rule: 'extra' as const,
  description: null,
};
const requested: ImageEvent = { type: 'ImageCreationRequested', data: { ...request, requested_at: now } };
const started: ImageEvent = { type: 'ImageBuildStarted', data: { image_id, worker_id: 'w1', attempt: 1, started_at: now } };
const downloading: ImageEvent = { type: 'ImageBuildProgressed', data: { image_id, stage: 'downloading', detail: '1 of 3 MiB', at: now } };
const created: ImageEvent = { type: 'ImageCreated', data: { image_id, worker_id: 'w1', size_mib: 300, created_at: now } };
const used: ImageEvent = { type: 'ImageUsedByVm', data: { image_id, vm_id: 'vm-1', used_at: now } };
const released: ImageEvent = { type: 'ImageReleasedByVm', data: { image_id, vm_id: 'vm-1', released_at: now } };

describe('image decider: a job, then an image VMs boot', () => {
  it('asks for the image once (a retry appends nothing)', () => {
    spec.given([]).when({ type: 'RequestImageCreation', ...request, now }).then([requested]);
    spec.given([requested]).when({ type: 'RequestImageCreation', ...request, now }).then([]);
  });

  it('lets one worker claim the job; another worker, or a second claim, appends nothing', () => {
    spec.given([requested]).when({ type: 'StartImageBuild', worker_id: 'w1', attempt: 1, now }).then([started]);
    spec.given([requested, started]).when({ type: 'StartImageBuild', worker_id: 'w2', attempt: 1, now }).then([]);
    spec.given([requested, started]).when({ type: 'StartImageBuild', worker_id: 'w1', attempt: 1, now }).then([]);
  });

  it('lets its worker take the job up again after a restart, attempt by attempt', () => {
    const again: ImageEvent = { type: 'ImageBuildStarted', data: { image_id, worker_id: 'w1', attempt: 2, started_at: now } };
    spec.given([requested, started, downloading]).when({ type: 'StartImageBuild', worker_id: 'w1', attempt: 2, now }).then([again]);
    spec.given([requested, started, downloading]).when({ type: 'StartImageBuild', worker_id: 'w2', attempt: 2, now }).then([]);
  });

  it('records stages while the job runs, then its end: created by its worker, or failed at the stage it reached', () => {
    spec.given([requested, started]).when({ type: 'RecordImageProgress', stage: 'downloading', detail: '1 of 3 MiB', now }).then([downloading]);
    spec.given([requested]).when({ type: 'RecordImageProgress', stage: 'downloading', detail: null, now }).then([]);
    spec.given([requested, started, downloading]).when({ type: 'RecordImageCreated', worker_id: 'w1', size_mib: 300, now }).then([created]);
    spec.given([requested, started, downloading]).when({ type: 'RecordImageCreated', worker_id: 'w2', size_mib: 300, now }).then([]);
    spec
      .given([requested, started, downloading])
      .when({ type: 'FailImageCreation', reason: 'layer sha256:… not found', now })
      .then([{ type: 'ImageCreationFailed', data: { image_id, stage: 'downloading', reason: 'layer sha256:… not found', failed_at: now } }]);
    spec.given([requested, started, created]).when({ type: 'FailImageCreation', reason: 'late', now }).then([]);
  });

  it('lets VMs of its org (or of any org, once public) use a built image; a released VM never holds it again', () => {
    spec.given([requested, started, created]).when({ type: 'UseImage', vm_id: 'vm-1', org_id: 'org-1', now }).then([used]);
    spec.given([requested, started]).when({ type: 'UseImage', vm_id: 'vm-1', org_id: 'org-1', now }).thenThrows('not_found');
    spec.given([requested, started, created]).when({ type: 'UseImage', vm_id: 'vm-2', org_id: 'org-2', now }).thenThrows('not_found');
    const published: ImageEvent = { type: 'ImageVisibilityChanged', data: { image_id, is_public: true, changed_at: now } };
    spec.given([requested, started, created]).when({ type: 'SetImageVisibility', is_public: true, now }).then([published]);
    spec
      .given([requested, started, created, published])
      .when({ type: 'UseImage', vm_id: 'vm-2', org_id: 'org-2', now })
      .then([{ type: 'ImageUsedByVm', data: { image_id, vm_id: 'vm-2', used_at: now } }]);
    spec.given([requested, started, created, used]).when({ type: 'ReleaseImage', vm_id: 'vm-1', now }).then([released]);
    spec.given([requested, started, created, used, released]).when({ type: 'UseImage', vm_id: 'vm-1', org_id: 'org-1', now }).then([]);
  });

  it('is deleted only once built and unused: 409 while its job runs or a VM uses it, 404 when there is none', () => {
    const deleted: ImageEvent = { type: 'ImageDeleted', data: { image_id, deleted_at: now } };
    spec.given([requested, started, created, used]).when({ type: 'DeleteImage', now }).thenThrows('conflict', 'image is in use by 1 VM(s); delete them first');
    spec.given([requested, started, created, used, released]).when({ type: 'DeleteImage', now }).then([deleted]);
    spec.given([requested, started]).when({ type: 'DeleteImage', now }).thenThrows('conflict', "image 'alpine' is still being created");
    spec.given([]).when({ type: 'DeleteImage', now }).thenThrows('not_found');
    spec.given([requested, started, created, deleted]).when({ type: 'DeleteImage', now }).thenThrows('not_found');
    spec.given([requested, started, created, deleted]).when({ type: 'UseImage', vm_id: 'vm-3', org_id: 'org-1', now }).thenThrows('not_found');
  });
});
