import { deciderSpec } from '../testing/decider-spec';
import { forkDecider } from './fork.decider';
import type { ForkEvent } from './fork.events';

const now = '2026-11-24T10:00:00.000Z';
const spec = deciderSpec(forkDecider);
const request = {
  fork_id: 'f-1',
  org_id: 'org-2',
  owner_id: 'key-2',
  source: { org_id: 'org-1', org_name: 'acme', repo_name: 'app', tag_name: 'v1', commit_id: 'c-1' },
  repo_name: 'app',
  tag_name: 'v1',
  vm_id: 'vm-1',
  vm_ssh_public_key: 'ssh-ed25519 AAAA arbor-vm-vm-1',
  vm_ssh_key_generation: 1,
  commit_id: 'c-2',
  repo_id: 'r-1',
  tag_id: 't-1',
};
const requested: ForkEvent = { type: 'ForkRequested', data: { ...request, requested_at: now } };
const vmStarted: ForkEvent = { type: 'ForkVmStarted', data: { fork_id: 'f-1', vm_id: 'vm-1' } };
const committed: ForkEvent = { type: 'ForkCommitted', data: { fork_id: 'f-1', commit_id: 'c-2' } };
const repoReady: ForkEvent = { type: 'ForkRepositoryReady', data: { fork_id: 'f-1', repo_id: 'r-1', created: true } };
const aborted: ForkEvent = { type: 'ForkAborted', data: { fork_id: 'f-1', kind: 'conflict', reason: "tag 'v1' already exists" } };

describe('fork decider: the saga moves one step at a time', () => {
  it('takes each step once, in order; a step reported twice or out of turn appends nothing', () => {
    spec.given([]).when({ type: 'RequestFork', ...request, now }).then([requested]);
    spec.given([requested]).when({ type: 'RecordForkVmStarted' }).then([vmStarted]);
    spec.given([requested, vmStarted]).when({ type: 'RecordForkVmStarted' }).then([]);
    spec.given([requested]).when({ type: 'RecordForkCommitted' }).then([]);
    spec.given([requested, vmStarted]).when({ type: 'RecordForkCommitted' }).then([committed]);
    spec.given([requested, vmStarted, committed]).when({ type: 'RecordForkRepositoryReady', created: true }).then([repoReady]);
    spec
      .given([requested, vmStarted, committed, repoReady])
      .when({ type: 'RecordRepoForked', now })
      .then([{ type: 'RepoForked', data: { fork_id: 'f-1', org_id: 'org-2', repo_name: 'app', tag_name: 'v1', tag_id: 't-1', commit_id: 'c-2', vm_id: 'vm-1', reference: 'app:v1', forked_at: now } }]);
  });

  it('an abort stops the steps; the failure is recorded once what it made is gone', () => {
    spec.given([requested, vmStarted]).when({ type: 'AbortFork', kind: 'conflict', reason: "tag 'v1' already exists" }).then([aborted]);
    spec.given([requested, vmStarted, aborted]).when({ type: 'RecordForkCommitted' }).then([]);
    spec.given([requested, vmStarted, aborted]).when({ type: 'AbortFork', kind: 'failed', reason: 'again' }).then([]);
    spec
      .given([requested, vmStarted, aborted])
      .when({ type: 'RecordForkFailed', now })
      .then([{ type: 'ForkFailed', data: { fork_id: 'f-1', kind: 'conflict', reason: "tag 'v1' already exists", failed_at: now } }]);
    spec.given([requested]).when({ type: 'RecordForkFailed', now }).then([]);
  });

  it('a fork id is used once', () => spec.given([requested]).when({ type: 'RequestFork', ...request, now }).thenThrows('conflict'));
});
