import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { cloneBranch, envVarsOf, projectStepContext, requestProjectVm, upcast, type AggregateRepository, type DeployConfig, type ProjectIntent } from '@arbor/application';
import {
  DomainError,
  Exec,
  execKey,
  nextProjectStep,
  Project,
  Vm,
  type ProjectCommand,
  type ProjectFailureStep,
  type ProjectRequested,
  type ProjectState,
  type ProjectStep,
} from '@arbor/domain';
import type { RecordedEvent } from '@arbor/event-store';
import type { HypervisorDriver } from '@arbor/hypervisor';
import { type Log, silentLog } from '@arbor/observability';
import { FOLLOW_SCRIPT, RUN_SCRIPT, runLogFile, runStateDir } from './deploy-guest-scripts';
import { copyTreeIntoVm } from './deploy-source-copy';
import { ExecWatch, type ExecEnding } from './exec-watch';
import type { StreamReactor } from './stream-reactor';
import type { VmPlacements } from './vm-placements';

/** Deploys being carried out in this process, by project id (process-wide, as execs and forks are). */
const runningHere = new Map<string, Promise<void>>();

/** Exec events that end an exec. */
const EXEC_ENDINGS = new Set(['ExecExited', 'ExecFailed', 'ExecLost']);

export interface DeploySagaOptions {
  config: DeployConfig;
  /** Where the worker clones repositories on its host (one directory per deploy under way, removed after). */
  cloneDir: string;
  /** How often a step looks at the log while it waits (for the VM, an exec). */
  pollMs?: number;
}

/**
 * The deploy saga (a process manager) for `project-<id>` streams, on the worker of the project's
 * VM: it asks for the VM should the api have stopped before it did, clones the branch on this host
 * while the VM boots, copies the tree into the VM through the driver (the VM needs no network),
 * then runs each configured step as an exec of the VM (install, build: to their exit; run:
 * detached, followed by its exec), recording each step on the project's stream.
 *
 * Every step is keyed by the project and its name (the exec ids too), so a worker that dies at any
 * point carries on from the last recorded step: a clone or copy is taken again, an exec already
 * asked for is waited on, an exec cut off by the restart fails the deploy with the reason (it is
 * never run twice). Once running, the run command's exec ending (relatedTo) ends the project; a
 * follower lost with a restart is replaced by a new one, the command itself running on.
 */
export class DeploySaga implements StreamReactor {
  readonly aggregate = Project;
  /** Running projects whose run command is followed by an exec not yet ended: project → exec stream. */
  private readonly watched = new Map<string, string>();
  private readonly projectOfExec = new Map<string, string>();

  constructor(
    private readonly aggregates: AggregateRepository,
    private readonly driver: HypervisorDriver,
    private readonly placements: VmPlacements,
    private readonly log: Log = silentLog,
    private readonly options: DeploySagaOptions,
  ) {}

  /** Clones left behind by a worker that stopped mid-copy (none of them is under way now). */
  async discover(): Promise<string[]> {
    const left = await readdir(this.options.cloneDir).catch(() => [] as string[]);
    await Promise.all(left.filter((name) => !runningHere.has(name)).map((name) => rm(join(this.options.cloneDir, name), { recursive: true, force: true })));
    return [];
  }

  /** The end of an exec following a running project's command brings the project up to date. */
  relatedTo(event: RecordedEvent): string[] {
    if (!EXEC_ENDINGS.has(event.type)) return [];
    const project_id = this.projectOfExec.get(event.stream_id);
    if (!project_id) return [];
    this.projectOfExec.delete(event.stream_id);
    this.watched.delete(project_id);
    return [project_id];
  }

  async react(project_id: string): Promise<boolean> {
    if (runningHere.has(project_id) || this.watched.has(project_id)) return true;
    const { state } = await this.aggregates.load(Project, project_id);
    if (!['cloning', 'installing', 'building', 'starting', 'running'].includes(state.status)) return false;
    // Another host's VM: its worker carries the deploy out.
    if (await this.placements.elsewhere(state.request!.vm_id)) return false;
    if (state.status === 'running') return this.followRun(project_id);
    const run = this.run(project_id)
      .catch((error) => this.log.warn(`worker: deploy ${project_id} stopped, the next resync goes on: ${(error as Error).message}`))
      .finally(() => runningHere.delete(project_id));
    runningHere.set(project_id, run);
    return true;
  }

  /** Takes steps until the deploy runs, has ended, or belongs to another host. */
  private async run(project_id: string): Promise<void> {
    for (;;) {
      const { state, recorded } = await this.aggregates.load(Project, project_id);
      const step = new DeployStep(this.aggregates, this.driver, this.placements, this.log, this.options, state, recorded[0]);
      let progressed: boolean;
      switch (state.status) {
        case 'cloning':
          progressed = state.copied ? await step.startNext() : await step.copySource();
          break;
        case 'installing':
        case 'building':
          progressed = await step.finishStep();
          break;
        case 'starting':
          progressed = await step.awaitStart();
          break;
        case 'running':
          // From here the end of the command's exec brings the project on (relatedTo).
          await this.followRun(project_id);
          return;
        default:
          return;
      }
      if (!progressed) return;
    }
  }

  /**
   * A running project: while the exec following its command has not ended, remember it (its end
   * comes back through relatedTo); once it has, the project stopped or failed with the command's
   * status, unless the follower was only cut off by a restart: then a new one takes over.
   */
  private async followRun(project_id: string): Promise<boolean> {
    const { state, recorded } = await this.aggregates.load(Project, project_id);
    if (state.status !== 'running') return false;
    const request = state.request!;
    const stream = Exec.stream(execKey(request.org_id, state.exec_id!));
    // Remembered before the look, so an ending appended meanwhile comes back through relatedTo.
    this.watched.set(project_id, stream);
    this.projectOfExec.set(stream, project_id);
    const ending = await new ExecWatch(this.aggregates.store, stream).poll();
    if (!ending) return true;
    this.watched.delete(project_id);
    this.projectOfExec.delete(stream);
    const step = new DeployStep(this.aggregates, this.driver, this.placements, this.log, this.options, state, recorded[0]);
    // A follower cut off by a restart, or stopped at the output cap (the command itself runs on:
    // then only its end is followed, its output going on in the VM's log file).
    if (ending.kind === 'lost' || ending.output_limited) {
      if (!(await step.follow(ending.output_limited || state.quiet))) return false;
      return this.followRun(project_id);
    }
    const reason =
      ending.kind === 'exited' ? `the run command exited with code ${ending.exit_code}` : `the run command's exec ended: ${ending.reason}`;
    await step.record({ type: 'RecordProjectRunExited', exit_code: ending.exit_code, reason, now: new Date().toISOString() });
    return false;
  }
}

/** One step of one deploy, on the state it was taken from; each returns whether it recorded progress. */
class DeployStep {
  private readonly request: ProjectRequested['data'];
  private readonly intent: ProjectIntent;

  constructor(
    private readonly aggregates: AggregateRepository,
    private readonly driver: HypervisorDriver,
    private readonly placements: VmPlacements,
    private readonly log: Log,
    private readonly options: DeploySagaOptions,
    private readonly state: ProjectState,
    intent: RecordedEvent,
  ) {
    this.request = state.request!;
    this.intent = { event_id: intent.id, correlation_id: intent.metadata.correlation_id };
  }

  /**
   * The VM asked for (again, should the api have stopped first), placed here, the branch cloned
   * on this host while the VM boots, the tree copied in once it runs.
   */
  async copySource(): Promise<boolean> {
    const { vm_id, project_id, repo, branch, directory, working_dir } = this.request;
    if ((await this.aggregates.load(Vm, vm_id)).state.lifecycle === 'none') {
      await requestProjectVm(this.aggregates, this.request, this.intent, await envVarsOf(this.aggregates, this.request.owner_id));
    }
    const placed = await this.waitFor(`vm ${vm_id} to be placed`, async () => {
      const owner = await this.placements.ownerOf(vm_id);
      if (owner) return { owner, gone: null };
      const gone = await this.vmGone();
      return gone ? { owner: null, gone } : undefined;
    });
    if (placed.gone) return this.fail('vm', placed.gone);
    // Another host's VM: its worker clones and copies.
    if (placed.owner !== this.placements.workerId) return false;

    const hostDir = join(this.options.cloneDir, project_id);
    await mkdir(this.options.cloneDir, { recursive: true, mode: 0o700 });
    try {
      let tree;
      try {
        tree = await cloneBranch(this.options.config, repo, branch, hostDir);
      } catch (error) {
        return this.fail('clone', (error as Error).message);
      }
      this.log.info(`worker: deploy ${project_id}: cloned ${repo}@${branch} (${tree.commit_sha.slice(0, 12)}, ${tree.files} files, ${tree.bytes} bytes)`);
      const gone = await this.waitFor(`vm ${vm_id} to boot`, () => this.vmRunning());
      if (gone !== 'running') return this.fail('vm', gone);
      try {
        await copyTreeIntoVm(this.driver, vm_id, hostDir, `/root/.arbor-deploy/${project_id}`, directory, working_dir);
      } catch (error) {
        return this.fail('clone', `copying the repository into the VM failed: ${(error as Error).message}`);
      }
      await this.record({ type: 'RecordProjectSourceCopied', commit_sha: tree.commit_sha, files: tree.files, bytes: tree.bytes, now: new Date().toISOString() });
      return true;
    } finally {
      await rm(hostDir, { recursive: true, force: true });
    }
  }

  /** The next configured step, or the end when none is left (nothing to run: ready). */
  async startNext(): Promise<boolean> {
    const step = nextProjectStep(this.state);
    if (step === null) return this.record({ type: 'RecordProjectReady', now: new Date().toISOString() });
    return this.record({ type: 'StartProjectStep', step, now: new Date().toISOString() });
  }

  /** Install or build: its exec asked for (once), then waited for; exit code 0 goes on, anything else fails the deploy. */
  async finishStep(): Promise<boolean> {
    const step = this.state.step!;
    const watch = await this.requestExec(step, this.stepArgv(step), this.options.config.stepTimeoutSecs);
    if (!watch) return false;
    // The exec's own timeout stops the command; this bound only catches a worker that never answers.
    const ending = await this.waitFor(`the ${step} command`, () => watch.poll().then((e) => e ?? undefined), (this.options.config.stepTimeoutSecs + 600) * 1000).catch(
      (error: Error): ExecEnding => ({ kind: 'failed', exit_code: null, reason: error.message, output_limited: false }),
    );
    if (ending.kind === 'exited' && ending.exit_code === 0) return this.startNext();
    return this.fail(step, this.failureOf(step, ending));
  }

  /**
   * The run command started detached; `running` once it has stayed up for the grace period
   * (ARBOR_DEPLOY_START_SECS), failed when it exits before.
   */
  async awaitStart(): Promise<boolean> {
    const { project_id } = this.request;
    const watch = await this.requestExec('run', ['/bin/sh', '-c', RUN_SCRIPT, 'arbor-run', runStateDir(project_id), runLogFile(project_id), this.request.settings.run_command!], 0);
    if (!watch) return false;
    const started = await this.waitFor('the run command to start', async () => ((await watch.poll()) || watch.started ? true : undefined), 600_000).catch(() => false);
    if (!started) return this.fail('run', 'the run command did not start in time');
    const upUntil = Date.now() + this.options.config.startGraceMs;
    while (Date.now() < upUntil && !(await watch.poll())?.kind) await sleep(this.options.pollMs ?? 100);
    const ending = await watch.poll();
    // A follower stopped at the output cap says nothing of the command: running, then followed quietly.
    if (ending && !ending.output_limited) return this.fail('run', `${this.failureOf('run', ending)} within its first ${this.options.config.startGraceMs / 1000} s`);
    return this.record({ type: 'RecordProjectRunning', now: new Date().toISOString() });
  }

  /** A new exec follows the running command (its previous follower ended before it); false when the VM is gone. */
  async follow(quiet: boolean): Promise<boolean> {
    const vm = await this.aggregates.load(Vm, this.request.vm_id);
    if (!['running', 'paused', 'booting'].includes(vm.state.lifecycle)) {
      await this.record({ type: 'RecordProjectRunExited', exit_code: null, reason: 'the VM is gone', now: new Date().toISOString() });
      return false;
    }
    if (!(await this.record({ type: 'FollowProjectRun', quiet }))) return false;
    const { state } = await this.aggregates.load(Project, this.request.project_id);
    const { project_id } = this.request;
    const argv = ['/bin/sh', '-c', FOLLOW_SCRIPT, 'arbor-follow', runStateDir(project_id), runLogFile(project_id), quiet ? '1' : '0'];
    await this.requestExecAs(state.exec_id!, `follow-${state.follows}`, argv, 0);
    return true;
  }

  /**
   * Records a step (its command id: the command and what tells it apart, so a replay appends it
   * once); false when the project no longer wanted it, which ends this run of the saga.
   */
  async record(command: ProjectCommand): Promise<boolean> {
    const key = command.type === 'StartProjectStep' ? [command.step] : command.type === 'FollowProjectRun' ? [String(this.state.follows)] : [];
    const { events } = await this.aggregates.handle(Project, this.request.project_id, command, projectStepContext(this.request, this.intent, command.type, ...key));
    return events.length > 0;
  }

  private stepArgv(step: ProjectStep): string[] {
    const command = step === 'install' ? this.request.settings.install_command! : this.request.settings.build_command!;
    return ['/bin/sh', '-c', command];
  }

  /** Asks for the step's exec (once: its id and command id are the step's) and returns its watch; false when it cannot be asked for. */
  private async requestExec(step: ProjectStep, argv: string[], timeout_secs: number): Promise<ExecWatch | false> {
    return this.requestExecAs(this.state.exec_id!, step, argv, timeout_secs);
  }

  private async requestExecAs(exec_id: string, name: string, argv: string[], timeout_secs: number): Promise<ExecWatch | false> {
    const { org_id, vm_id, working_dir } = this.request;
    const key = execKey(org_id, exec_id);
    try {
      await this.aggregates.handle(
        Exec,
        key,
        { type: 'RequestExec', exec_id, vm_id, org_id, command: argv, env: null, working_dir, stdin: null, timeout_secs, now: new Date().toISOString() },
        projectStepContext(this.request, this.intent, 'exec', name),
      );
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      await this.fail(this.state.step ?? 'run', `the ${name} command could not be asked for: ${error.message}`);
      return false;
    }
    return new ExecWatch(this.aggregates.store, Exec.stream(key));
  }

  private failureOf(step: ProjectStep, ending: ExecEnding): string {
    if (ending.kind === 'exited') {
      if (ending.exit_code === 124 && step !== 'run') return `the ${step} command did not finish within ${this.options.config.stepTimeoutSecs} s (ARBOR_DEPLOY_STEP_TIMEOUT_SECS)`;
      if (ending.output_limited) return `the ${step} command's output passed the exec output cap (ARBOR_EXEC_OUTPUT_MAX_BYTES): it was stopped`;
      return `the ${step} command exited with code ${ending.exit_code}`;
    }
    return ending.kind === 'lost' ? `the ${step} command was cut off: ${ending.reason}` : `the ${step} command could not run: ${ending.reason}`;
  }

  private async fail(step: ProjectFailureStep, reason: string): Promise<boolean> {
    this.log.warn(`worker: deploy ${this.request.project_id} failed at ${step}: ${reason}`);
    return this.record({ type: 'FailProject', step, reason, now: new Date().toISOString() });
  }

  /** 'running' once the VM runs; why it never will otherwise (a string naming it). */
  private async vmRunning(): Promise<string | undefined> {
    const { state } = await this.aggregates.load(Vm, this.request.vm_id);
    if (state.lifecycle === 'running') return 'running';
    return (await this.vmGone()) ?? undefined;
  }

  /** Why the project's VM will never run (failed to boot, died, deleted), or null. */
  private async vmGone(): Promise<string | null> {
    const { state, recorded } = await this.aggregates.load(Vm, this.request.vm_id);
    const failure = [...recorded].reverse().map(upcast).find((event) => event.type === 'VmBootFailed' || event.type === 'VmDied');
    const why = (failure?.data as { reason?: string } | undefined)?.reason;
    switch (state.lifecycle) {
      case 'dead':
        return `vm ${this.request.vm_id} is dead${why ? `: ${why}` : ''}`;
      case 'deleting':
      case 'deleted':
        return why ? `vm ${this.request.vm_id} failed to boot: ${why}` : `vm ${this.request.vm_id} was deleted`;
      default:
        return null;
    }
  }

  /** Polls until `probe` gives a value (the VM's boot, an exec's end), at most `timeoutMs` (default: the clone's bound plus the VM's boot). */
  private async waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 900_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(this.options.pollMs ?? 100);
    }
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
