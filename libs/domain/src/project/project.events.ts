import { eventTypes, type DomainEvent } from '../shared/decider';
import type { VmConfig } from '../vm/vm-config';
import type { DeploySettings } from './deploy-source';

/** The commands a deploy runs in its VM, in this order, each an exec of the VM (its output in the VM's logs). */
export type ProjectStep = 'install' | 'build' | 'run';

/** Where a deploy failed: its VM (did not boot, was deleted), the clone and copy, or one of its steps. */
export type ProjectFailureStep = 'vm' | 'clone' | ProjectStep;

/**
 * Stream `project-<id>`: a repository deployed into a VM of its own, a saga the worker drives
 * (`POST /api/v1/deploy`). The api checks the repository and branch on the git host (404), reserves
 * the name (409) and the VM's quota, appends ProjectRequested and asks for the VM. The worker of
 * that VM clones the branch on its host and copies the tree in (ProjectSourceCopied), then runs
 * each configured step as an exec of the VM (ProjectStepStarted), and ends with ProjectRunning
 * (the run command started and stayed up), ProjectReady (nothing to run) or ProjectFailed.
 */
export type ProjectRequested = DomainEvent<
  'ProjectRequested',
  {
    project_id: string;
    org_id: string;
    /** The key that asked: the VM and the execs are its user's. */
    owner_id: string;
    /** Unique in the org while its VM exists (reserved on `projectname-<org>-<name>`). */
    name: string;
    /** `owner/repo` on the git host. */
    repo: string;
    /** The git host the repository is cloned from (ARBOR_GIT_BASE_URL; never with credentials). */
    git_base_url: string;
    /** The branch cloned: the one asked for, else the repository's default branch. */
    branch: string;
    /** The branch's head when the deploy was asked for (the clone takes the head it finds then). */
    commit_sha: string;
    settings: DeploySettings;
    /** Where the repository's files go in the VM. */
    directory: string;
    /** Where the steps run: `directory`, or `settings.working_directory` inside it. */
    working_dir: string;
    vm_id: string;
    vm_config: VmConfig;
    /** The VM's own SSH public key and the SSH key generation its key pair derives from. */
    vm_ssh_public_key: string;
    vm_ssh_key_generation: number;
    requested_at: string;
  }
>;
/** The branch was cloned on the VM's host and its files (`.git` included) copied into the VM. */
export type ProjectSourceCopied = DomainEvent<'ProjectSourceCopied', { project_id: string; commit_sha: string; files: number; bytes: number; copied_at: string }>;
/** A step's command runs as exec `exec_id` of the VM, in `working_dir` (`sh -c <command>`). */
export type ProjectStepStarted = DomainEvent<'ProjectStepStarted', { project_id: string; step: ProjectStep; exec_id: string; command: string; started_at: string }>;
/** The run command started and was still up after its grace period; it keeps writing to exec `exec_id`. */
export type ProjectRunning = DomainEvent<'ProjectRunning', { project_id: string; exec_id: string; running_at: string }>;
/** Every step succeeded and there is no run command. */
export type ProjectReady = DomainEvent<'ProjectReady', { project_id: string; ready_at: string }>;
/** The deploy stopped; the VM stays for inspection (its exec logs hold the failing step's output). */
export type ProjectFailed = DomainEvent<
  'ProjectFailed',
  { project_id: string; step: ProjectFailureStep; reason: string; exec_id: string | null; failed_at: string }
>;
/**
 * The run command is followed by a new exec: the one before was lost with a worker restart, or
 * stopped at the exec output cap (then `quiet`: only the command's end is followed, its output
 * going on in the VM's log file). The command itself runs on, detached, in the VM.
 */
export type ProjectRunFollowed = DomainEvent<'ProjectRunFollowed', { project_id: string; exec_id: string; quiet: boolean }>;
/** The run command ended after it was running: exit code 0 stops the project, anything else fails it. */
export type ProjectRunExited = DomainEvent<'ProjectRunExited', { project_id: string; exit_code: number | null; reason: string; exited_at: string }>;

export type ProjectEvent =
  | ProjectRequested
  | ProjectSourceCopied
  | ProjectStepStarted
  | ProjectRunning
  | ProjectReady
  | ProjectFailed
  | ProjectRunFollowed
  | ProjectRunExited;
export const PROJECT_EVENT_TYPES = eventTypes<ProjectEvent>()(
  'ProjectRequested',
  'ProjectSourceCopied',
  'ProjectStepStarted',
  'ProjectRunning',
  'ProjectReady',
  'ProjectFailed',
  'ProjectRunFollowed',
  'ProjectRunExited',
);
