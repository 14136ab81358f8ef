import { deciderSpec } from '../testing/decider-spec';
import { UUID_PATTERN } from '../shared/deterministic-id';
import { orgCommitId } from './commit-id-key';
import { commitIdDecider } from './commit-id.decider';
import type { CommitIdEvent } from './commit-id.events';

const commit_id = '22222222-2222-4222-8222-222222222222';
const vmA = '11111111-1111-4111-8111-11111111111a';
const vmB = '11111111-1111-4111-8111-11111111111b';
const spec = deciderSpec(commitIdDecider);
const reservedBy = (vm_id: string): CommitIdEvent => ({ type: 'CommitIdReserved', data: { commit_id, vm_id } });

describe('client-chosen commit ids: the first VM asked holds the id', () => {
  it('reserves a free id for the asking VM', () =>
    spec.given([]).when({ type: 'ReserveCommitId', commit_id, vm_id: vmA }).then([reservedBy(vmA)]));

  it('lets the holder ask again, and refuses every other VM', () => {
    spec.given([reservedBy(vmA)]).when({ type: 'ReserveCommitId', commit_id, vm_id: vmA }).then([]);
    spec.given([reservedBy(vmA)]).when({ type: 'ReserveCommitId', commit_id, vm_id: vmB }).thenThrows('conflict', `commit ${commit_id} already exists`);
  });
});

describe('a refused commit gives its reserved id back', () => {
  it('releases the id held by that VM, and only that VM', () => {
    spec.given([reservedBy(vmA)]).when({ type: 'ReleaseCommitId', commit_id, vm_id: vmA }).then([{ type: 'CommitIdReleased', data: { commit_id, vm_id: vmA } }]);
    spec.given([reservedBy(vmA)]).when({ type: 'ReleaseCommitId', commit_id, vm_id: vmB }).then([]);
    spec.given([reservedBy(vmA), { type: 'CommitIdReleased', data: { commit_id, vm_id: vmA } }]).when({ type: 'ReserveCommitId', commit_id, vm_id: vmB }).then([reservedBy(vmB)]);
  });
});

describe('chosen ids are scoped by org', () => {
  it('derives one id in the log per org and chosen id, whatever its case', () => {
    expect(orgCommitId('org-a', commit_id)).toBe(orgCommitId('org-a', commit_id.toUpperCase()));
    expect(orgCommitId('org-a', commit_id)).not.toBe(orgCommitId('org-b', commit_id));
    expect(orgCommitId('org-a', commit_id)).not.toBe(commit_id);
    expect(orgCommitId('org-a', commit_id)).toMatch(UUID_PATTERN);
  });
});
