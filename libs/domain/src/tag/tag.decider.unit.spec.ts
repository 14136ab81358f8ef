import { deciderSpec } from '../testing/decider-spec';
import { tagDecider } from './tag.decider';
import type { TagEvent } from './tag.events';

const tag_id = '33333333-3333-4333-8333-333333333333';
const commitA = '22222222-2222-4222-8222-22222222222a';
const commitB = '22222222-2222-4222-8222-22222222222b';
const now = '2026-11-23T10:00:00.000Z';
const spec = deciderSpec(tagDecider);

const create = { type: 'CreateTag' as const, tag_id, org_id: 'org-1', tag_name: 'stable', commit_id: commitA, description: 'first', now };
const created: TagEvent = { type: 'TagCreated', data: { tag_id, org_id: 'org-1', tag_name: 'stable', commit_id: commitA, description: 'first', created_at: now } };
const deleted: TagEvent = { type: 'TagDeleted', data: { tag_id, deleted_at: now } };

describe('tag decider: a movable name for a commit, unique in its org', () => {
  it('creates a tag under a free name', () => spec.given([]).when(create).then([created]));

  it('refuses a name that is taken, and a name outside the naming rule', () => {
    spec.given([created]).when(create).thenThrows('conflict', "tag 'stable' already exists");
    spec.given([]).when({ ...create, tag_name: 'no spaces' }).thenThrows('invalid', /tag_name may hold only/);
    spec.given([]).when({ ...create, tag_name: 'x'.repeat(65) }).thenThrows('invalid');
  });

  it('a deleted name can be taken again', () => spec.given([created, deleted]).when(create).then([created]));

  it('moves to another commit, remembering where it pointed', () =>
    spec
      .given([created])
      .when({ type: 'UpdateTag', commit_id: commitB, now })
      .then([{ type: 'TagMoved', data: { tag_id, commit_id: commitB, previous_commit_id: commitA, moved_at: now } }]));

  it('changes, clears or keeps the description (absent keeps it, null clears it)', () => {
    const described = (description: string | null): TagEvent => ({ type: 'TagDescriptionChanged', data: { tag_id, description, changed_at: now } });
    spec.given([created]).when({ type: 'UpdateTag', description: 'second', now }).then([described('second')]);
    spec.given([created]).when({ type: 'UpdateTag', description: null, now }).then([described(null)]);
    spec.given([created]).when({ type: 'UpdateTag', now }).then([]);
  });

  it('moving to the commit it names already, with the same description, changes nothing', () =>
    spec.given([created]).when({ type: 'UpdateTag', commit_id: commitA, description: 'first', now }).then([]));

  it('moves and describes in one update', () =>
    spec
      .given([created])
      .when({ type: 'UpdateTag', commit_id: commitB, description: 'second', now })
      .then([
        { type: 'TagMoved', data: { tag_id, commit_id: commitB, previous_commit_id: commitA, moved_at: now } },
        { type: 'TagDescriptionChanged', data: { tag_id, description: 'second', changed_at: now } },
      ]));

  it('updates and deletes only a tag that exists', () => {
    spec.given([]).when({ type: 'UpdateTag', commit_id: commitB, now }).thenThrows('not_found', 'tag not found');
    spec.given([created, deleted]).when({ type: 'DeleteTag', now }).thenThrows('not_found', 'tag not found');
    spec.given([created]).when({ type: 'DeleteTag', now }).then([deleted]);
  });
});
