import { deciderSpec } from '../testing/decider-spec';
import { VM_CONFIG_DEFAULTS } from '../vm/vm-config';
import { projectDecider, projectExecId } from './project.decider';
import type { ProjectEvent } from './project.events';

const now = '2026-11-24T10:00:00.000Z';
const spec = deciderSpec(projectDecider);
const project_id = 'p-1';
const settings = { install_command: 'npm ci', build_command: null, run_command: 'npm start', working_directory: null };
const request = {
  project_id,
  org_id: 'org-1',
  owner_id: 'key-1',
  name: 'app',
  repo: 'acme/app',
  git_base_url: 'https://github.com',
  branch: 'main',
  commit_sha: 'a'.repeat(40),
  settings,
  directory: '/root/app',
  working_dir: '/root/app',
  vm_id: 'vm-1',
  vm_config: VM_CONFIG_DEFAULTS,
  vm_ssh_public_key: 'ssh-ed25519 AAAA arbor-vm-vm-1',
  vm_ssh_key_generation: 1,
};
const requested: ProjectEvent = { type: 'ProjectRequested', data: { ...request, requested_at: now } };
const copied: ProjectEvent = { type: 'ProjectSourceCopied', data: { project_id, commit_sha: 'b'.repeat(40), files: 3, bytes: 100, copied_at: now } };
const installing: ProjectEvent = { type: 'ProjectStepStarted', data: { project_id, step: 'install', exec_id: projectExecId(project_id, 'install'), command: 'npm ci', started_at: now } };
const starting: ProjectEvent = { type: 'ProjectStepStarted', data: { project_id, step: 'run', exec_id: projectExecId(project_id, 'run'), command: 'npm start', started_at: now } };
const running: ProjectEvent = { type: 'ProjectRunning', data: { project_id, exec_id: projectExecId(project_id, 'run'), running_at: now } };

describe('project decider: a deploy moves one step at a time', () => {
  it('copies the source once, then starts each configured step once, in order (build has no command: skipped)', () => {
    spec.given([]).when({ type: 'RequestProject', ...request, now }).then([requested]);
    spec.given([requested]).when({ type: 'StartProjectStep', step: 'install', now }).then([]); // nothing to run before the files are in
    spec.given([requested]).when({ type: 'RecordProjectSourceCopied', commit_sha: 'b'.repeat(40), files: 3, bytes: 100, now }).then([copied]);
    spec.given([requested, copied]).when({ type: 'RecordProjectSourceCopied', commit_sha: 'c'.repeat(40), files: 3, bytes: 100, now }).then([]);
    spec.given([requested, copied]).when({ type: 'StartProjectStep', step: 'run', now }).then([]); // out of turn
    spec.given([requested, copied]).when({ type: 'StartProjectStep', step: 'install', now }).then([installing]);
    spec.given([requested, copied, installing]).when({ type: 'StartProjectStep', step: 'install', now }).then([]); // a replay
    spec.given([requested, copied, installing]).when({ type: 'StartProjectStep', step: 'build', now }).then([]);
    spec.given([requested, copied, installing]).when({ type: 'StartProjectStep', step: 'run', now }).then([starting]);
    spec.given([requested, copied, installing]).when({ type: 'RecordProjectRunning', now }).then([]);
    spec.given([requested, copied, installing, starting]).when({ type: 'RecordProjectRunning', now }).then([running]);
    spec.given([requested, copied, installing, starting]).when({ type: 'RecordProjectReady', now }).then([]);
  });

  it('without a run command the deploy is ready after its last step', () => {
    const noRun = { ...requested, data: { ...requested.data, settings: { ...settings, run_command: null } } } as ProjectEvent;
    const ready: ProjectEvent = { type: 'ProjectReady', data: { project_id, ready_at: now } };
    spec.given([noRun, copied]).when({ type: 'RecordProjectReady', now }).then([]); // install still to run
    spec.given([noRun, copied, installing]).when({ type: 'RecordProjectReady', now }).then([ready]);
    const nothing = { ...requested, data: { ...requested.data, settings: { ...settings, install_command: null, run_command: null } } } as ProjectEvent;
    spec.given([nothing, copied]).when({ type: 'RecordProjectReady', now }).then([ready]);
  });

  it("a failure names the step and its exec; nothing follows it", () => {
    const failed: ProjectEvent = { type: 'ProjectFailed', data: { project_id, step: 'install', reason: 'install command exited with code 1', exec_id: installing.data.exec_id, failed_at: now } };
    spec.given([requested, copied, installing]).when({ type: 'FailProject', step: 'install', reason: 'install command exited with code 1', now }).then([failed]);
    spec
      .given([requested])
      .when({ type: 'FailProject', step: 'clone', reason: 'repository too large', now })
      .then([{ type: 'ProjectFailed', data: { project_id, step: 'clone', reason: 'repository too large', exec_id: null, failed_at: now } }]);
    spec.given([requested, copied, installing, failed]).when({ type: 'StartProjectStep', step: 'run', now }).then([]);
    spec.given([requested, copied, installing, failed]).when({ type: 'FailProject', step: 'install', reason: 'again', now }).then([]);
    spec.given([requested, copied, installing, starting, running]).when({ type: 'FailProject', step: 'run', reason: 'late', now }).then([]);
  });

  it('a running command is followed by a new exec after a restart, and its exit ends the project', () => {
    const followed: ProjectEvent = { type: 'ProjectRunFollowed', data: { project_id, exec_id: projectExecId(project_id, 'run', 1), quiet: false } };
    const given = [requested, copied, installing, starting, running];
    spec.given(given).when({ type: 'FollowProjectRun', quiet: false }).then([followed]);
    spec.given([...given, followed]).when({ type: 'FollowProjectRun', quiet: true }).then([{ type: 'ProjectRunFollowed', data: { project_id, exec_id: projectExecId(project_id, 'run', 2), quiet: true } }]);
    const exited: ProjectEvent = { type: 'ProjectRunExited', data: { project_id, exit_code: 3, reason: 'the run command exited with code 3', exited_at: now } };
    spec.given(given).when({ type: 'RecordProjectRunExited', exit_code: 3, reason: 'the run command exited with code 3', now }).then([exited]);
    spec.given([...given, exited]).when({ type: 'RecordProjectRunExited', exit_code: 3, reason: 'again', now }).then([]);
    spec.given([...given, exited]).when({ type: 'FollowProjectRun', quiet: false }).then([]);
  });

  it('a project id is used once, and its request obeys the rules', () => {
    spec.given([requested]).when({ type: 'RequestProject', ...request, now }).thenThrows('conflict');
    spec.given([]).when({ type: 'RequestProject', ...request, name: 'a b', now }).thenThrows('invalid');
    spec.given([]).when({ type: 'RequestProject', ...request, repo: 'acme', now }).thenThrows('invalid');
    spec.given([]).when({ type: 'RequestProject', ...request, branch: '-x', now }).thenThrows('invalid');
  });
});
