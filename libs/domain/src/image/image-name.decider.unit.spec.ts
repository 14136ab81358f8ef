import { deciderSpec } from '../testing/decider-spec';
import { imageNameDecider } from './image-name.decider';
import type { ImageNameEvent } from './image-name.events';

const now = '2026-11-26T10:00:00.000Z';
const spec = deciderSpec(imageNameDecider);
const reserve = (image_id: string, replacing: string | null = null) => ({ type: 'ReserveImageName' as const, org_id: 'org-1', image_name: 'alpine', image_id, replacing, now });
const reserved = (image_id: string): ImageNameEvent => ({ type: 'ImageNameReserved', data: { org_id: 'org-1', image_name: 'alpine', image_id, reserved_at: now } });
const released = (image_id: string): ImageNameEvent => ({ type: 'ImageNameReleased', data: { org_id: 'org-1', image_name: 'alpine', image_id, released_at: now } });

describe('image name decider: one image holds a name in an org at a time', () => {
  it('reserves a free name; a retry by the same image appends nothing; another image gets a 409', () => {
    spec.given([]).when(reserve('a')).then([reserved('a')]);
    spec.given([reserved('a')]).when(reserve('a')).then([]);
    spec.given([reserved('a')]).when(reserve('b')).thenThrows('conflict', "image 'alpine' already exists");
  });

  it('is free again once its holder lets go, and only its holder can', () => {
    spec.given([reserved('a')]).when({ type: 'ReleaseImageName', image_id: 'b', now }).then([]);
    spec.given([reserved('a')]).when({ type: 'ReleaseImageName', image_id: 'a', now }).then([released('a')]);
    spec.given([reserved('a'), released('a')]).when(reserve('b')).then([reserved('b')]);
  });

  it('is taken over from exactly the holder found finished (a release that never came)', () => {
    spec.given([reserved('a')]).when(reserve('b', 'a')).then([reserved('b')]);
    spec.given([reserved('a')]).when(reserve('b', 'c')).thenThrows('conflict');
  });
});
