import { deciderSpec } from '../testing/decider-spec';
import { VM_CONFIG_DEFAULTS } from '../vm/vm-config';
import { commitDecider } from './commit.decider';
import type { CommitEvent } from './commit.events';

const commit_id = '22222222-2222-4222-8222-222222222222';
const vmA = '11111111-1111-4111-8111-11111111111a';
const vmB = '11111111-1111-4111-8111-11111111111b';
const now = '2026-11-23T10:00:00.000Z';
const spec = deciderSpec(commitDecider);

const created: CommitEvent = {
  type: 'CommitCreated',
  data: {
    commit_id,
    org_id: 'org-1',
    owner_id: 'key-1',
    name: 'c',
    description: null,
    parent_vm_id: vmA,
    grandparent_commit_id: null,
    includes_memory: false,
    config: VM_CONFIG_DEFAULTS,
    driver: 'memory',
    created_at: now,
  },
};
const used = (vm_id: string): CommitEvent => ({ type: 'CommitUsedByVm', data: { commit_id, vm_id, used_at: now } });
const released = (vm_id: string): CommitEvent => ({ type: 'CommitReleasedByVm', data: { commit_id, vm_id, released_at: now } });
const deleted: CommitEvent = { type: 'CommitDeleted', data: { commit_id, deleted_at: now } };
const madePublic: CommitEvent = { type: 'CommitUpdated', data: { commit_id, is_public: true, name: 'c', description: null } };

describe('commit decider: restores and deletion meet on the commit stream', () => {
  it('a restore records its use once, whoever claims it first (the API or the worker)', () => {
    spec.given([created]).when({ type: 'UseCommit', vm_id: vmA, org_id: 'org-1', now }).then([used(vmA)]);
    spec.given([created, used(vmA)]).when({ type: 'UseCommit', vm_id: vmA, org_id: 'org-1', now }).then([]);
  });

  it('a deleted or missing commit cannot be restored', () => {
    spec.given([created, deleted]).when({ type: 'UseCommit', vm_id: vmA, org_id: 'org-1', now }).thenThrows('not_found', 'commit not found');
    spec.given([]).when({ type: 'UseCommit', vm_id: vmA, org_id: 'org-1', now }).thenThrows('not_found', 'commit not found');
  });

  it('a use claimed while the commit was public stands when it turns private (the worker claims it again)', () => {
    const madePrivate: CommitEvent = { type: 'CommitUpdated', data: { commit_id, is_public: false, name: 'c', description: null } };
    spec.given([created, madePublic, used(vmB), madePrivate]).when({ type: 'UseCommit', vm_id: vmB, org_id: 'org-2', now }).then([]);
  });

  it("another org may restore the commit only while it is public", () => {
    spec.given([created]).when({ type: 'UseCommit', vm_id: vmB, org_id: 'org-2', now }).thenThrows('not_found', 'commit not found');
    spec.given([created, madePublic]).when({ type: 'UseCommit', vm_id: vmB, org_id: 'org-2', now }).then([used(vmB)]);
  });

  it('refuses deletion while VMs started from the commit exist, naming how many', () => {
    spec.given([created, used(vmA), used(vmB)]).when({ type: 'DeleteCommit', now }).thenThrows('conflict', 'commit still has 2 active VM(s)');
    spec.given([created, used(vmA), used(vmB), released(vmA)]).when({ type: 'DeleteCommit', now }).thenThrows('conflict', 'commit still has 1 active VM(s)');
  });

  it('deletes the commit once every VM that used it is released', () =>
    spec.given([created, used(vmA), released(vmA)]).when({ type: 'DeleteCommit', now }).then([deleted]));

  it('releases a use once; a released VM never holds the commit again', () => {
    spec.given([created, used(vmA)]).when({ type: 'ReleaseCommit', vm_id: vmA, now }).then([released(vmA)]);
    spec.given([created, used(vmA), released(vmA)]).when({ type: 'ReleaseCommit', vm_id: vmA, now }).then([]);
    spec.given([created, used(vmA), released(vmA)]).when({ type: 'UseCommit', vm_id: vmA, org_id: 'org-1', now }).then([]);
    spec.given([created]).when({ type: 'ReleaseCommit', vm_id: vmB, now }).then([]);
  });

  describe('tags hold the commit', () => {
    const hold = { type: 'HoldCommitForTag' as const, tag_id: 't-1', tag: 'repo app:v1', tag_stream: 'repo-org-1-app', org_id: 'org-1', now };
    const tagged: CommitEvent = { type: 'CommitTagged', data: { commit_id, tag_id: 't-1', tag: 'repo app:v1', tag_stream: 'repo-org-1-app', tagged_at: now } };
    const untagged: CommitEvent = { type: 'CommitUntagged', data: { commit_id, tag_id: 't-1', untagged_at: now } };

    it('a tagged commit cannot be deleted until the tag lets go of it', () => {
      spec.given([created]).when(hold).then([tagged]);
      spec.given([created, tagged]).when(hold).then([]);
      spec.given([created, tagged]).when({ type: 'DeleteCommit', now }).thenThrows('conflict', 'commit is still tagged: repo app:v1');
      spec.given([created, tagged]).when({ type: 'ReleaseCommitFromTag', tag_id: 't-1', now }).then([untagged]);
      spec.given([created, tagged, untagged]).when({ type: 'ReleaseCommitFromTag', tag_id: 't-1', now }).then([]);
      spec.given([created, tagged, untagged]).when({ type: 'DeleteCommit', now }).then([deleted]);
    });

    it("a tag names only a live commit its org may read", () => {
      spec.given([created, deleted]).when(hold).thenThrows('not_found', 'commit not found');
      spec.given([created]).when({ ...hold, org_id: 'org-2' }).thenThrows('not_found', 'commit not found');
      spec.given([created, madePublic]).when({ ...hold, org_id: 'org-2' }).then([tagged]);
    });
  });

  it('through a public repository any org may restore a private commit, never a deleted one', () => {
    spec.given([created]).when({ type: 'UseCommit', vm_id: vmB, org_id: 'org-2', through_public_repository: true, now }).then([used(vmB)]);
    spec.given([created, deleted]).when({ type: 'UseCommit', vm_id: vmB, org_id: 'org-2', through_public_repository: true, now }).thenThrows('not_found');
  });
});
