import { deciderSpec } from '../testing/decider-spec';
import { fold } from '../shared/decider';
import { DomainError } from '../shared/domain-error';
import { VM_CONFIG_DEFAULTS } from './vm-config';
import { vmDecider } from './vm.decider';
import type { VmEvent } from './vm.events';

const vm_id = '11111111-1111-4111-8111-111111111111';
const spec = deciderSpec(vmDecider);
const now = '2026-11-23T10:00:00.000Z';

const requested: VmEvent = {
  type: 'VmCreationRequested',
  data: {
    vm_id,
    org_id: 'org-1',
    owner_id: 'key-1',
    config: VM_CONFIG_DEFAULTS,
    labels: { team: 'a' },
    env: {},
    ip: 'fd00::1',
    parent_commit_id: null,
    grandparent_vm_id: null,
    ssh_public_key: null,
    ssh_key_generation: null,
    requested_at: now,
  },
};
const booted: VmEvent = { type: 'VmBooted', data: { vm_id, driver: 'sandbox', booted_at: now } };
const pauseRequested: VmEvent = { type: 'VmPauseRequested', data: { vm_id } };
const paused: VmEvent = { type: 'VmPaused', data: { vm_id } };
const deletionRequested: VmEvent = { type: 'VmDeletionRequested', data: { vm_id } };
const deleted: VmEvent = { type: 'VmDeleted', data: { vm_id, deleted_at: now } };

describe('vm decider', () => {
  describe('creation', () => {
    it('requests a machine for a new vm', () =>
      spec
        .given([])
        .when({ type: 'RequestVmCreation', vm_id, org_id: 'org-1', owner_id: 'key-1', config: VM_CONFIG_DEFAULTS, labels: { team: 'a' }, env: {}, ip: 'fd00::1', now })
        .then([requested]));

    it('refuses to create a vm twice', () =>
      spec
        .given([requested])
        .when({ type: 'RequestVmCreation', vm_id, org_id: 'org-1', owner_id: 'key-1', config: VM_CONFIG_DEFAULTS, labels: null, env: {}, ip: 'fd00::1', now })
        .thenThrows('conflict', 'vm already exists'));

    it('records the boot only while booting', () => {
      spec.given([requested]).when({ type: 'RecordVmBooted', driver: 'sandbox', now }).then([booted]);
      spec.given([requested, booted]).when({ type: 'RecordVmBooted', driver: 'sandbox', now }).then([]);
    });

    it("records the machine's addresses with its boot, before it", () => {
      const network = { ipv6: 'fd12:3456:789a::42', ipv4: '10.213.0.2' };
      const attached: VmEvent = { type: 'VmNetworkAttached', data: { vm_id, ...network } };
      spec.given([requested]).when({ type: 'RecordVmBooted', driver: 'sandbox', network, now }).then([attached, booted]);
      spec.given([requested, attached, booted]).when({ type: 'RecordVmBooted', driver: 'sandbox', network, now }).then([]);
    });

    it('a boot failure deletes the vm and keeps the reason in the failure event', () => {
      const failed: VmEvent = { type: 'VmBootFailed', data: { vm_id, reason: 'no image' } };
      spec.given([requested]).when({ type: 'RecordVmBootFailed', reason: 'no image', now }).then([failed, deleted]);
      spec.given([requested, failed, deleted]).when({ type: 'RequestVmStateChange', target: 'Paused' }).thenThrows('not_found', 'vm not found');
      spec.given([requested, failed, deleted]).when({ type: 'RecordVmBooted', driver: 'sandbox', now }).then([]);
    });

    it('a boot failure reported after a deletion was asked for leaves the deletion to finish', () =>
      spec.given([requested, deletionRequested]).when({ type: 'RecordVmBootFailed', reason: 'no image', now }).then([]));

    it('a boot failure from a log written before failures deleted the vm still leaves it dead', () => {
      const failed: VmEvent = { type: 'VmBootFailed', data: { vm_id, reason: 'no image' } };
      spec.given([requested, failed]).when({ type: 'RequestVmStateChange', target: 'Paused' }).thenThrows('conflict', 'vm is dead');
      spec.given([requested, failed]).when({ type: 'RequestVmDeletion' }).then([deletionRequested]);
    });
  });

  describe('pause and resume', () => {
    it('waits for boot to finish before pausing', () =>
      spec.given([requested]).when({ type: 'RequestVmStateChange', target: 'Paused' }).thenThrows('conflict', 'vm is still booting'));

    it('asks the worker to pause a running vm, then records it', () => {
      spec.given([requested, booted]).when({ type: 'RequestVmStateChange', target: 'Paused' }).then([pauseRequested]);
      spec.given([requested, booted, pauseRequested]).when({ type: 'RecordVmPaused' }).then([paused]);
    });

    it('is a no-op to pause a paused vm or resume a running one', () => {
      spec.given([requested, booted, pauseRequested, paused]).when({ type: 'RequestVmStateChange', target: 'Paused' }).then([]);
      spec.given([requested, booted]).when({ type: 'RequestVmStateChange', target: 'Running' }).then([]);
    });

    it('resumes a paused vm', () =>
      spec
        .given([requested, booted, pauseRequested, paused])
        .when({ type: 'RequestVmStateChange', target: 'Running' })
        .then([{ type: 'VmResumeRequested', data: { vm_id } }]));

    it('refuses a second operation while one is in progress', () =>
      spec.given([requested, booted, pauseRequested]).when({ type: 'RequestVmStateChange', target: 'Running' }).thenThrows('conflict', /pause in progress/));

    it('a failed pause leaves the vm running and free for the next operation', () =>
      spec
        .given([requested, booted, pauseRequested, { type: 'VmOperationFailed', data: { vm_id, operation: 'pause', reason: 'x' } }])
        .when({ type: 'RequestVmStateChange', target: 'Paused' })
        .then([pauseRequested]));
  });

  describe('labels', () => {
    it('replaces the labels', () =>
      spec.given([requested]).when({ type: 'SetVmLabels', labels: { a: 'b' } }).then([{ type: 'VmLabelsSet', data: { vm_id, labels: { a: 'b' } } }]));

    it('reports a missing vm as not found', () => {
      expect(() => vmDecider.decide({ type: 'SetVmLabels', labels: null }, vmDecider.initialState())).toThrow(DomainError);
      spec.given([]).when({ type: 'SetVmLabels', labels: null }).thenThrows('not_found', 'vm not found');
    });
  });

  describe('deletion', () => {
    it('requests deletion once; a repeat while deleting appends nothing', () => {
      spec.given([requested, booted]).when({ type: 'RequestVmDeletion' }).then([deletionRequested]);
      spec.given([requested, booted, deletionRequested]).when({ type: 'RequestVmDeletion' }).then([]);
    });

    it('a deleted vm is not found and ignores late outcomes', () => {
      spec.given([requested, booted, deletionRequested, deleted]).when({ type: 'RequestVmDeletion' }).thenThrows('not_found', 'vm not found');
      spec.given([requested, booted, deletionRequested, deleted]).when({ type: 'RecordVmDied', reason: 'gone' }).then([]);
    });

    it('a vm deleted while booting never records the boot', () =>
      spec.given([requested, deletionRequested]).when({ type: 'RecordVmBooted', driver: 'sandbox', now }).then([]));

    it('refuses deletion while a pause is in progress', () =>
      spec.given([requested, booted, pauseRequested]).when({ type: 'RequestVmDeletion' }).thenThrows('conflict', /in progress/));
  });

  describe('commit', () => {
    const commit_id = '22222222-2222-4222-8222-222222222222';
    const request = { type: 'RequestVmCommit' as const, commit_id, name: 'c', description: null, keep_paused: false };
    const commitRequested = (keep_paused: boolean): VmEvent => ({ type: 'VmCommitRequested', data: { vm_id, commit_id, name: 'c', description: null, keep_paused } });
    const committed = (keep_paused: boolean): VmEvent => ({ type: 'VmCommitted', data: { vm_id, commit_id, includes_memory: true, keep_paused } });

    it('asks the worker to commit a running or a paused vm, then records the commit', () => {
      spec.given([requested, booted]).when(request).then([commitRequested(false)]);
      spec.given([requested, booted, pauseRequested, paused]).when(request).then([commitRequested(false)]);
      spec.given([requested, booted, commitRequested(false)]).when({ type: 'RecordVmCommitted', includes_memory: true }).then([committed(false)]);
    });

    it('refuses a commit of a booting, dead or busy vm', () => {
      spec.given([requested]).when(request).thenThrows('conflict', 'vm is still booting');
      spec.given([requested, booted, { type: 'VmDied', data: { vm_id, reason: 'x' } }]).when(request).thenThrows('conflict', 'vm is dead');
      spec.given([requested, booted, commitRequested(false)]).when(request).thenThrows('conflict', 'vm has a commit in progress; try again when it completes');
      spec.given([requested, booted, commitRequested(false)]).when({ type: 'RequestVmDeletion' }).thenThrows('conflict', /commit in progress/);
    });

    it('keep_paused leaves a running vm paused once committed; without it the vm keeps its state', () => {
      spec.given([requested, booted]).when({ ...request, keep_paused: true }).then([commitRequested(true)]);
      const keptPaused = [requested, booted, commitRequested(true), committed(true)];
      spec.given(keptPaused).when({ type: 'RequestVmStateChange', target: 'Paused' }).then([]);
      spec.given(keptPaused).when({ type: 'RequestVmStateChange', target: 'Running' }).then([{ type: 'VmResumeRequested', data: { vm_id } }]);
      spec.given([requested, booted, commitRequested(false), committed(false)]).when({ type: 'RequestVmStateChange', target: 'Running' }).then([]);
    });

    it('records the outcome only of the commit asked for, once', () => {
      spec.given([requested, booted]).when({ type: 'RecordVmCommitted', includes_memory: true }).then([]);
      spec.given([requested, booted, commitRequested(false), committed(false)]).when({ type: 'RecordVmCommitted', includes_memory: true }).then([]);
    });

    it('a failed commit frees the vm for the next operation', () => {
      const failedCommit: VmEvent = { type: 'VmOperationFailed', data: { vm_id, operation: 'commit', reason: 'disk full' } };
      spec.given([requested, booted, commitRequested(false)]).when({ type: 'RecordVmOperationFailed', operation: 'commit', reason: 'disk full' }).then([failedCommit]);
      spec.given([requested, booted, commitRequested(false), failedCommit]).when(request).then([commitRequested(false)]);
    });
  });

  describe('disk resize', () => {
    const resizeRequested: VmEvent = { type: 'VmDiskResizeRequested', data: { vm_id, fs_size_mib: 2048 } };

    it('grows the disk: asks the worker, then records the new size', () => {
      spec.given([requested, booted]).when({ type: 'RequestVmDiskResize', fs_size_mib: 2048 }).then([resizeRequested]);
      spec.given([requested, booted, resizeRequested]).when({ type: 'RecordVmDiskResized' }).then([{ type: 'VmDiskResized', data: { vm_id, fs_size_mib: 2048 } }]);
    });

    it('never shrinks, nor stays the same, naming the current size', () => {
      spec.given([requested, booted]).when({ type: 'RequestVmDiskResize', fs_size_mib: 1024 }).thenThrows('invalid', 'fs_size_mib must be larger than the current size (1024 MiB)');
      spec.given([requested, booted]).when({ type: 'RequestVmDiskResize', fs_size_mib: 512 }).thenThrows('invalid');
    });

    it('measures the next resize from the size the last one reached', () => {
      const resized: VmEvent = { type: 'VmDiskResized', data: { vm_id, fs_size_mib: 2048 } };
      spec.given([requested, booted, resizeRequested, resized]).when({ type: 'RequestVmDiskResize', fs_size_mib: 2048 }).thenThrows('invalid', /current size \(2048 MiB\)/);
    });

    it('a paused vm may be resized and stays paused', () => {
      spec.given([requested, booted, pauseRequested, paused]).when({ type: 'RequestVmDiskResize', fs_size_mib: 2048 }).then([resizeRequested]);
      const afterResize = [requested, booted, pauseRequested, paused, resizeRequested, { type: 'VmDiskResized', data: { vm_id, fs_size_mib: 2048 } } as VmEvent];
      spec.given(afterResize).when({ type: 'RequestVmStateChange', target: 'Paused' }).then([]);
    });
  });

  describe('SSH key generations and re-keying', () => {
    const keyed: VmEvent = { ...requested, data: { ...(requested.data as object), ssh_public_key: 'ssh-ed25519 AAAA-1 arbor-vm', ssh_key_generation: 1 } } as VmEvent;
    const rekey = { type: 'RequestVmSshKeyRotation' as const, ssh_public_key: 'ssh-ed25519 AAAA-2 arbor-vm', ssh_key_generation: 2 };
    const rotationRequested: VmEvent = { type: 'VmSshKeyRotationRequested', data: { vm_id, ssh_public_key: rekey.ssh_public_key, ssh_key_generation: 2 } };

    it('records the generation a new vm key comes from, and refuses a key without one', () => {
      const create = { type: 'RequestVmCreation' as const, vm_id, org_id: 'org-1', owner_id: 'key-1', config: VM_CONFIG_DEFAULTS, labels: { team: 'a' }, env: {}, ip: 'fd00::1', now };
      spec.given([]).when({ ...create, ssh_public_key: 'ssh-ed25519 AAAA-1 arbor-vm', ssh_key_generation: 1 }).then([keyed]);
      spec.given([]).when({ ...create, ssh_public_key: 'ssh-ed25519 AAAA-1 arbor-vm' }).thenThrows('invalid', /needs the generation/);
    });

    it('re-keys a running vm: asks the worker, then takes the new key and generation', () => {
      spec.given([keyed, booted]).when(rekey).then([rotationRequested]);
      spec
        .given([keyed, booted, rotationRequested])
        .when({ type: 'RecordVmSshKeyRotated' })
        .then([{ type: 'VmSshKeyRotated', data: { vm_id, ssh_public_key: rekey.ssh_public_key, ssh_key_generation: 2 } }]);
      const rotated: VmEvent = { type: 'VmSshKeyRotated', data: { vm_id, ssh_public_key: rekey.ssh_public_key, ssh_key_generation: 2 } };
      expect(fold(vmDecider, [keyed, booted, rotationRequested, rotated])).toMatchObject({ ssh_public_key: rekey.ssh_public_key, ssh_key_generation: 2, pending: null });
      // Already on that generation: nothing to do.
      spec.given([keyed, booted, rotationRequested, rotated]).when(rekey).then([]);
    });

    it('refuses to re-key a paused, booting or busy vm; a failure leaves the old key', () => {
      spec.given([keyed, booted, pauseRequested, paused]).when(rekey).thenThrows('conflict', 'vm is paused; resume it to re-key it');
      spec.given([keyed]).when(rekey).thenThrows('conflict', 'vm is still booting');
      spec.given([keyed, booted, rotationRequested]).when({ type: 'RequestVmStateChange', target: 'Paused' }).thenThrows('conflict', /rekey in progress/);
      const failed: VmEvent = { type: 'VmOperationFailed', data: { vm_id, operation: 'rekey', reason: 'guest refused' } };
      expect(fold(vmDecider, [keyed, booted, rotationRequested, failed])).toMatchObject({ ssh_key_generation: 1, pending: null });
    });
  });

  it('a machine that dies is reported dead', () =>
    spec.given([requested, booted]).when({ type: 'RecordVmDied', reason: 'process exited' }).then([{ type: 'VmDied', data: { vm_id, reason: 'process exited' } }]));
});
