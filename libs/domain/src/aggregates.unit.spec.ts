import { AGGREGATES, aggregateOfStream, Commit, Exec, IdempotentResponse, SystemBootstrap, Tag, Vm } from './aggregates';
import { DomainError } from './shared/domain-error';
import { intentTypes, outcomeOf } from './shared/outcomes';
import type { VmEvent } from './vm/vm.events';

const vm_id = '11111111-1111-4111-8111-111111111111';

describe('the table of aggregates', () => {
  it('names every stream <category>-<key>, and finds the aggregate of a stream by its category', () => {
    expect(Vm.stream(vm_id)).toBe(`vm-${vm_id}`);
    expect(Tag.stream({ org_id: 'org-1', tag_name: 'stable' })).toBe('tag-org-1-stable');
    expect(SystemBootstrap.stream('bootstrap')).toBe('system-bootstrap');
    expect(IdempotentResponse.stream({ org_id: 'org-1', key_hash: 'ab12' })).toBe('idempotency-org-1-ab12');
    for (const aggregate of AGGREGATES) expect(aggregateOfStream(`${aggregate.category}-x-y`)).toBe(aggregate);
    expect(aggregateOfStream('nobody-1')).toBeNull();
    expect(new Set(AGGREGATES.map((a) => a.category)).size).toBe(AGGREGATES.length);
  });

  it('gives a uuid-named aggregate its id back from a stream name, and only its own', () => {
    expect(Exec.idOf(Exec.stream(vm_id))).toBe(vm_id);
    expect(Exec.idOf(Vm.stream(vm_id))).toBeNull();
    expect(Commit.idOf('commitid-1')).toBeNull();
  });

  it('lists every event type once, and no two aggregates share one', () => {
    const all = AGGREGATES.flatMap((a) => a.eventTypes);
    expect(new Set(all).size).toBe(all.length);
  });

  it('writes outcome rules only for intents of its own, ending in events of its own', () => {
    for (const aggregate of AGGREGATES) {
      for (const intent of intentTypes(aggregate.outcomes)) {
        expect(aggregate.eventTypes).toContain(intent);
        for (const ending of Object.keys(aggregate.outcomes[intent]!)) expect(aggregate.eventTypes).toContain(ending);
      }
    }
  });
});

describe('vm outcomes: when each VM operation is done', () => {
  const outcome = (intent: VmEvent['type'], event: VmEvent) => outcomeOf(Vm.outcomes, intent, event);
  const kindOf = (result: ReturnType<typeof outcome>) => (result && !result.succeeded ? [result.error.kind, result.error.message] : result);

  it('a boot succeeds when the machine runs, fails with the reason, and a VM deleted meanwhile is not found', () => {
    expect(outcome('VmCreationRequested', { type: 'VmBooted', data: { vm_id, driver: 'sandbox', booted_at: 'now' } })).toEqual({ succeeded: true });
    expect(kindOf(outcome('VmCreationRequested', { type: 'VmBootFailed', data: { vm_id, reason: 'no space' } }))).toEqual(['failed', `vm ${vm_id} failed to boot: no space`]);
    expect(kindOf(outcome('VmCreationRequested', { type: 'VmDeleted', data: { vm_id, deleted_at: 'now' } }))).toEqual(['not_found', 'vm not found']);
  });

  it('pause, resume, commit and resize end in their own event, a failure with the worker reason, or the VM gone', () => {
    const failure: VmEvent = { type: 'VmOperationFailed', data: { vm_id, operation: 'commit', reason: 'disk full' } };
    expect(outcome('VmCommitRequested', { type: 'VmCommitted', data: { vm_id, commit_id: 'c', includes_memory: false, keep_paused: false } })).toEqual({ succeeded: true });
    expect(kindOf(outcome('VmCommitRequested', failure))).toEqual(['failed', 'disk full']);
    expect(kindOf(outcome('VmPauseRequested', { type: 'VmDied', data: { vm_id, reason: 'the machine stopped' } }))).toEqual(['failed', 'the machine stopped']);
    expect(kindOf(outcome('VmResumeRequested', { type: 'VmDeleted', data: { vm_id, deleted_at: 'now' } }))).toEqual(['not_found', 'vm not found']);
    expect(outcome('VmDiskResizeRequested', { type: 'VmLabelsSet', data: { vm_id, labels: null } })).toBeNull();
    expect(outcome('VmPauseRequested', { type: 'VmResumed', data: { vm_id } })).toBeNull();
  });

  it('a deletion ends when the VM is deleted, or the host could not destroy it', () => {
    expect(outcome('VmDeletionRequested', { type: 'VmDeleted', data: { vm_id, deleted_at: 'now' } })).toEqual({ succeeded: true });
    const result = outcome('VmDeletionRequested', { type: 'VmOperationFailed', data: { vm_id, operation: 'delete', reason: 'busy' } });
    expect(result).toEqual({ succeeded: false, error: expect.any(DomainError) });
  });

  it('the intents are the events the worker acts on', () =>
    expect(intentTypes(Vm.outcomes).sort()).toEqual(['VmCommitRequested', 'VmCreationRequested', 'VmDeletionRequested', 'VmDiskResizeRequested', 'VmPauseRequested', 'VmResumeRequested', 'VmSshKeyRotationRequested']));
});
