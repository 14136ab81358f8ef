import type { Decider } from '../shared/decider';
import { conflict } from '../shared/domain-error';
import { deterministicUuid } from '../shared/deterministic-id';
import { requireName } from '../shared/names';
import type { ProjectCommand } from './project.commands';
import type { ProjectEvent, ProjectFailureStep, ProjectRequested, ProjectStep } from './project.events';
import { requireBranchName, requireRepositoryRef, type DeploySettings } from './deploy-source';

/**
 * Where a deploy stands, as `GET /arbor/v1/projects/{id}` shows it: `cloning` (the VM boots, the
 * branch is cloned and copied in), `installing`, `building`, `starting` (the run command's first
 * seconds), then `running`, `ready` (nothing to run), `failed` (with the reason), or `stopped`
 * (the run command exited with 0 after it was running).
 */
export type ProjectStatus = 'cloning' | 'installing' | 'building' | 'starting' | 'running' | 'ready' | 'failed' | 'stopped';

export interface ProjectState {
  status: ProjectStatus | 'none';
  request: ProjectRequested['data'] | null;
  /** The repository's files are in the VM. */
  copied: boolean;
  /** The step last started, and its exec (while running: the exec that follows the run command's output). */
  step: ProjectStep | null;
  exec_id: string | null;
  /** Execs that took over following the run command (after a worker restart, or the output cap). */
  follows: number;
  /** The run command's output is no longer followed into exec logs (it passed the cap once). */
  quiet: boolean;
  failure: { step: ProjectFailureStep; reason: string } | null;
}

const initialState = (): ProjectState => ({ status: 'none', request: null, copied: false, step: null, exec_id: null, follows: 0, quiet: false, failure: null });

const STATUS_OF_STEP: Record<ProjectStep, ProjectStatus> = { install: 'installing', build: 'building', run: 'starting' };
const COMMAND_OF_STEP: Record<ProjectStep, keyof DeploySettings> = { install: 'install_command', build: 'build_command', run: 'run_command' };
const DEPLOYING: readonly (ProjectStatus | 'none')[] = ['cloning', 'installing', 'building', 'starting'];

/** The steps a deploy takes: those whose command is set, in order. */
export function projectSteps(settings: DeploySettings): ProjectStep[] {
  return (['install', 'build', 'run'] as const).filter((step) => settings[COMMAND_OF_STEP[step]] !== null);
}

/** The command a step runs. */
export const commandOfStep = (settings: DeploySettings, step: ProjectStep): string => settings[COMMAND_OF_STEP[step]]!;

/** The exec of a step (or the n-th exec following the run command): derived, so a replayed step finds its exec. */
export function projectExecId(project_id: string, step: ProjectStep, follow = 0): string {
  return follow === 0 ? deterministicUuid(project_id, 'deploy', step) : deterministicUuid(project_id, 'deploy', step, 'follow', String(follow));
}

/** The step that comes after the state's last, or null when none is left. */
export function nextProjectStep(state: ProjectState): ProjectStep | null {
  const steps = projectSteps(state.request!.settings);
  return steps[state.step === null ? 0 : steps.indexOf(state.step) + 1] ?? null;
}

function decide(command: ProjectCommand, state: ProjectState): ProjectEvent[] {
  if (command.type === 'RequestProject') {
    if (state.status !== 'none') throw conflict(`project ${command.project_id} already exists`);
    requireName('name', command.name);
    requireRepositoryRef(command.repo);
    requireBranchName(command.branch);
    const { type: _, now, ...request } = command;
    return [{ type: 'ProjectRequested', data: { ...request, requested_at: now } }];
  }
  const request = state.request;
  if (!request) return [];
  const project_id = request.project_id;
  switch (command.type) {
    case 'RecordProjectSourceCopied':
      if (state.status !== 'cloning' || state.copied) return [];
      return [{ type: 'ProjectSourceCopied', data: { project_id, commit_sha: command.commit_sha, files: command.files, bytes: command.bytes, copied_at: command.now } }];
    case 'StartProjectStep': {
      // A step reported twice, or out of turn (a replay after a crash), appends nothing.
      if (!state.copied || !DEPLOYING.includes(state.status) || nextProjectStep(state) !== command.step) return [];
      const exec_id = projectExecId(project_id, command.step);
      return [{ type: 'ProjectStepStarted', data: { project_id, step: command.step, exec_id, command: commandOfStep(request.settings, command.step), started_at: command.now } }];
    }
    case 'RecordProjectRunning':
      if (state.status !== 'starting') return [];
      return [{ type: 'ProjectRunning', data: { project_id, exec_id: state.exec_id!, running_at: command.now } }];
    case 'RecordProjectReady':
      if (!state.copied || !DEPLOYING.includes(state.status) || nextProjectStep(state) !== null || state.step === 'run') return [];
      return [{ type: 'ProjectReady', data: { project_id, ready_at: command.now } }];
    case 'FailProject': {
      if (!DEPLOYING.includes(state.status)) return [];
      const exec_id = command.step === state.step ? state.exec_id : null;
      return [{ type: 'ProjectFailed', data: { project_id, step: command.step, reason: command.reason, exec_id, failed_at: command.now } }];
    }
    case 'FollowProjectRun':
      if (state.status !== 'running') return [];
      return [{ type: 'ProjectRunFollowed', data: { project_id, exec_id: projectExecId(project_id, 'run', state.follows + 1), quiet: command.quiet } }];
    case 'RecordProjectRunExited':
      if (state.status !== 'running') return [];
      return [{ type: 'ProjectRunExited', data: { project_id, exit_code: command.exit_code, reason: command.reason, exited_at: command.now } }];
  }
}

function evolve(state: ProjectState, event: ProjectEvent): ProjectState {
  switch (event.type) {
    case 'ProjectRequested':
      return { ...state, status: 'cloning', request: event.data };
    case 'ProjectSourceCopied':
      return { ...state, copied: true };
    case 'ProjectStepStarted':
      return { ...state, status: STATUS_OF_STEP[event.data.step], step: event.data.step, exec_id: event.data.exec_id };
    case 'ProjectRunning':
      return { ...state, status: 'running' };
    case 'ProjectReady':
      return { ...state, status: 'ready' };
    case 'ProjectFailed':
      return { ...state, status: 'failed', failure: { step: event.data.step, reason: event.data.reason } };
    case 'ProjectRunFollowed':
      return { ...state, exec_id: event.data.exec_id, follows: state.follows + 1, quiet: state.quiet || event.data.quiet };
    case 'ProjectRunExited':
      return event.data.exit_code === 0
        ? { ...state, status: 'stopped' }
        : { ...state, status: 'failed', failure: { step: 'run', reason: event.data.reason } };
  }
}

export const projectDecider: Decider<ProjectCommand, ProjectState, ProjectEvent> = { initialState, decide, evolve };
