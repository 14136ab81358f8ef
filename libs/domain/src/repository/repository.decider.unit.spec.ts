import { deciderSpec } from '../testing/decider-spec';
import { repositoryDecider } from './repository.decider';
import type { RepositoryEvent } from './repository.events';

const repo_id = '44444444-4444-4444-8444-444444444444';
const tag_id = '33333333-3333-4333-8333-333333333333';
const commitA = '22222222-2222-4222-8222-22222222222a';
const commitB = '22222222-2222-4222-8222-22222222222b';
const now = '2026-11-24T10:00:00.000Z';
const spec = deciderSpec(repositoryDecider);

const created: RepositoryEvent = { type: 'RepositoryCreated', data: { repo_id, org_id: 'org-1', name: 'app', description: null, created_at: now } };
const tagged: RepositoryEvent = { type: 'RepoTagCreated', data: { repo_id, tag_id, tag_name: 'v1', commit_id: commitA, description: null, created_at: now } };
const createTag = { type: 'CreateRepoTag' as const, tag_id, tag_name: 'v1', commit_id: commitA, description: null, now };

describe('repository decider', () => {
  it('creates a repository under a free, well-formed name', () => {
    spec.given([]).when({ type: 'CreateRepository', repo_id, org_id: 'org-1', name: 'app', description: null, now }).then([created]);
    spec.given([created]).when({ type: 'CreateRepository', repo_id, org_id: 'org-1', name: 'app', description: null, now }).thenThrows('conflict', "repository 'app' already exists");
    spec.given([]).when({ type: 'CreateRepository', repo_id, org_id: 'org-1', name: 'a/b', description: null, now }).thenThrows('invalid', /name may hold only/);
  });

  it('changes visibility; the same visibility again changes nothing', () => {
    const madePublic: RepositoryEvent = { type: 'RepositoryVisibilityChanged', data: { repo_id, is_public: true, changed_at: now } };
    spec.given([created]).when({ type: 'SetRepositoryVisibility', is_public: true, now }).then([madePublic]);
    spec.given([created, madePublic]).when({ type: 'SetRepositoryVisibility', is_public: true, now }).then([]);
    spec.given([]).when({ type: 'SetRepositoryVisibility', is_public: true, now }).thenThrows('not_found', 'repository not found');
  });

  it('tags a commit once per name, in a repository that exists', () => {
    spec.given([created]).when(createTag).then([tagged]);
    spec.given([created, tagged]).when(createTag).thenThrows('conflict', "tag 'v1' already exists in repository 'app'");
    spec.given([]).when(createTag).thenThrows('not_found', 'repository not found');
    spec.given([created]).when({ ...createTag, tag_name: 'bad tag' }).thenThrows('invalid', /tag_name may hold only/);
  });

  it("knows only the tags it has: names like Object.prototype's members are names like any other", () => {
    for (const tag_name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      spec.given([created]).when({ type: 'UpdateRepoTag', tag_name, commit_id: commitB, description: 'x', now }).thenThrows('not_found', 'tag not found');
      spec.given([created]).when({ type: 'DeleteRepoTag', tag_name, now }).thenThrows('not_found', 'tag not found');
      const named: RepositoryEvent = { type: 'RepoTagCreated', data: { ...(tagged.data as object), tag_name } as never };
      spec.given([created]).when({ ...createTag, tag_name }).then([named]);
      spec.given([created, named]).when({ type: 'UpdateRepoTag', tag_name, commit_id: commitB, description: undefined, now }).then([
        { type: 'RepoTagMoved', data: { repo_id, tag_id, tag_name, commit_id: commitB, previous_commit_id: commitA, moved_at: now } },
      ]);
    }
  });

  it('moves and describes a tag; an update with nothing in it is refused', () => {
    spec
      .given([created, tagged])
      .when({ type: 'UpdateRepoTag', tag_name: 'v1', commit_id: commitB, description: 'second', now })
      .then([
        { type: 'RepoTagMoved', data: { repo_id, tag_id, tag_name: 'v1', commit_id: commitB, previous_commit_id: commitA, moved_at: now } },
        { type: 'RepoTagDescribed', data: { repo_id, tag_id, tag_name: 'v1', description: 'second', changed_at: now } },
      ]);
    spec.given([created, tagged]).when({ type: 'UpdateRepoTag', tag_name: 'v1', now }).thenThrows('invalid', 'no updates provided');
    spec.given([created, tagged]).when({ type: 'UpdateRepoTag', tag_name: 'v2', commit_id: commitB, now }).thenThrows('not_found', 'tag not found');
  });

  it('deleting the repository deletes its tags with it, and frees the name', () => {
    const tagDeleted: RepositoryEvent = { type: 'RepoTagDeleted', data: { repo_id, tag_id, tag_name: 'v1', commit_id: commitA, deleted_at: now } };
    const repoDeleted: RepositoryEvent = { type: 'RepositoryDeleted', data: { repo_id, deleted_at: now } };
    spec.given([created, tagged]).when({ type: 'DeleteRepository', now }).then([tagDeleted, repoDeleted]);
    spec.given([created, tagged, tagDeleted, repoDeleted]).when({ type: 'CreateRepository', repo_id: 'r-2', org_id: 'org-1', name: 'app', description: null, now }).then([
      { type: 'RepositoryCreated', data: { repo_id: 'r-2', org_id: 'org-1', name: 'app', description: null, created_at: now } },
    ]);
    spec.given([created, tagged, tagDeleted, repoDeleted]).when(createTag).thenThrows('not_found', 'repository not found');
  });
});
