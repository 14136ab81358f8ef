import type { DomainCommand } from '../shared/decider';
import type { ProjectFailureStep, ProjectRequested, ProjectStep } from './project.events';

/** From the API, once the repository, the name and the quota are settled. */
export type RequestProject = DomainCommand<'RequestProject', Omit<ProjectRequested['data'], 'requested_at'> & { now: string }>;

/** From the worker, as the saga takes its steps. */
export type RecordProjectSourceCopied = DomainCommand<'RecordProjectSourceCopied', { commit_sha: string; files: number; bytes: number; now: string }>;
export type StartProjectStep = DomainCommand<'StartProjectStep', { step: ProjectStep; now: string }>;
export type RecordProjectRunning = DomainCommand<'RecordProjectRunning', { now: string }>;
export type RecordProjectReady = DomainCommand<'RecordProjectReady', { now: string }>;
export type FailProject = DomainCommand<'FailProject', { step: ProjectFailureStep; reason: string; now: string }>;
export type FollowProjectRun = DomainCommand<'FollowProjectRun', { quiet: boolean }>;
export type RecordProjectRunExited = DomainCommand<'RecordProjectRunExited', { exit_code: number | null; reason: string; now: string }>;

export type ProjectCommand =
  | RequestProject
  | RecordProjectSourceCopied
  | StartProjectStep
  | RecordProjectRunning
  | RecordProjectReady
  | FailProject
  | FollowProjectRun
  | RecordProjectRunExited;
