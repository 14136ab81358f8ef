import { awaitOutcome, causedBy, envVarsOf, TagHolds, type AggregateRepository } from '@arbor/application';
import {
  Commit,
  DomainError,
  Fork,
  OrgUsage,
  Repository,
  Vm,
  vmAddress,
  type ForkCommand,
  type ForkFailureKind,
  type ForkRequested,
  type ForkState,
} from '@arbor/domain';
import type { RecordedEvent } from '@arbor/event-store';
import { type Log, silentLog } from '@arbor/observability';
import type { StreamReactor } from './stream-reactor';

/**
 * Forks being carried out in this process, by id (process-wide, as execs are: a worker restarted
 * in the same process finds its predecessor's forks still running).
 */
const runningHere = new Map<string, Promise<void>>();

export interface ForkSagaOptions {
  /** How long one step may wait for the VM (to boot, to commit, to go) before the fork gives up. */
  stepTimeoutMs?: number;
}

/**
 * The fork saga (a process manager): for a `fork-<id>` stream it takes the next step its state
 * calls for, records it, and goes on: start a VM from the public source commit in the caller's
 * org, commit that VM, make the target repository if there is none, tag the commit there
 * (RepoForked). A step that cannot be taken aborts the fork, and the clean-up removes whatever
 * of its VM, commit and repository exists before ForkFailed ends it.
 *
 * Every step is idempotent (ids fixed by ForkRequested, commands keyed by the step's name), so
 * a worker that dies at any point and starts again carries the fork on from its last recorded
 * step, exactly once. Steps run in the background (react answers at once) so waiting for a VM
 * never holds up the worker's other streams or its checkpoint.
 */
export class ForkSaga implements StreamReactor {
  readonly aggregate = Fork;
  private readonly holds: TagHolds;

  constructor(
    private readonly aggregates: AggregateRepository,
    private readonly log: Log = silentLog,
    private readonly options: ForkSagaOptions = {},
  ) {
    this.holds = new TagHolds(aggregates);
  }

  async react(fork_id: string): Promise<boolean> {
    if (runningHere.has(fork_id)) return true;
    const { state } = await this.aggregates.load(Fork, fork_id);
    if (state.stage === 'none' || state.stage === 'forked' || state.stage === 'failed') return false;
    const run = this.run(fork_id)
      .catch((error) => this.log.warn(`worker: fork ${fork_id} stopped, the next resync goes on: ${(error as Error).message}`))
      .finally(() => runningHere.delete(fork_id));
    runningHere.set(fork_id, run);
    return true;
  }

  /** Takes steps until the fork has ended. */
  private async run(fork_id: string): Promise<void> {
    for (;;) {
      const { state, recorded } = await this.aggregates.load(Fork, fork_id);
      const step = new ForkStep(this.aggregates, this.holds, state, recorded[0], this.options.stepTimeoutMs ?? 300_000);
      switch (state.stage) {
        case 'requested':
          await step.startVm();
          break;
        case 'vm_started':
          await step.commitVm();
          break;
        case 'committed':
          await step.ensureRepository();
          break;
        case 'repository_ready':
          await step.tagCommit();
          break;
        case 'aborting':
          this.log.warn(`worker: fork ${fork_id} failed (${state.failure!.reason}); removing what it made`);
          await step.cleanUp();
          break;
        default:
          return;
      }
    }
  }
}

/** One step of one fork, on the state it was taken from. */
class ForkStep {
  private readonly request: ForkRequested['data'];

  constructor(
    private readonly aggregates: AggregateRepository,
    private readonly holds: TagHolds,
    private readonly state: ForkState,
    private readonly intent: RecordedEvent,
    private readonly timeoutMs: number,
  ) {
    this.request = state.request!;
  }

  /** A VM of the caller's org from the source commit, with the caller's env vars, running. */
  async startVm(): Promise<void> {
    const { vm_id, org_id, owner_id, source, vm_ssh_public_key, vm_ssh_key_generation } = this.request;
    const commit = (await this.aggregates.load(Commit, source.commit_id)).state;
    if (commit.status !== 'created') return this.abort('not_found', `the source commit of ${source.org_name}/${source.repo_name}:${source.tag_name} is gone`);
    const creation = await this.aggregates.handle(
      Vm,
      vm_id,
      {
        type: 'RequestVmCreation',
        vm_id,
        org_id,
        owner_id,
        config: commit.config!,
        labels: null,
        env: await envVarsOf(this.aggregates, owner_id),
        ip: vmAddress(org_id, vm_id),
        parent_commit_id: source.commit_id,
        grandparent_vm_id: commit.parent_vm_id,
        ssh_public_key: vm_ssh_public_key,
        ssh_key_generation: vm_ssh_key_generation,
        now: new Date().toISOString(),
      },
      this.context('vm'),
    );
    const use = { type: 'UseCommit' as const, vm_id, org_id, through_public_repository: true, now: new Date().toISOString() };
    const used = await this.aggregates.handle(Commit, source.commit_id, use, this.context('use')).then(
      () => true,
      (error) => rethrowUnless(error, 'not_found', false),
    );
    if (!used) return this.abort('not_found', `the source commit of ${source.org_name}/${source.repo_name}:${source.tag_name} is gone`);
    const booted = await this.settle(Vm, vm_id, 'VmCreationRequested', creation.revision - creation.events.length);
    if (!booted) return;
    await this.record({ type: 'RecordForkVmStarted' });
  }

  /** The VM committed into the caller's org under the fork's commit id. */
  async commitVm(): Promise<void> {
    const { vm_id, commit_id, source } = this.request;
    const name = `fork of ${source.org_name}/${source.repo_name}:${source.tag_name}`;
    const command = { type: 'RequestVmCommit' as const, commit_id, name, description: null, keep_paused: false };
    const asked = await this.aggregates.handle(Vm, vm_id, command, this.context('commit')).catch((error) => rethrowUnless(error, 'conflict', null));
    if (!asked) return this.abort('failed', `the fork's VM ${vm_id} cannot be committed now`);
    if (!(await this.settle(Vm, vm_id, 'VmCommitRequested', asked.revision - asked.events.length))) return;
    await this.record({ type: 'RecordForkCommitted' });
  }

  /** The target repository: the one there, or a new one the fork owns (and removes should it fail). */
  async ensureRepository(): Promise<void> {
    const { org_id, repo_name, repo_id } = this.request;
    const create = { type: 'CreateRepository' as const, repo_id, org_id, name: repo_name, description: null, now: new Date().toISOString() };
    await this.aggregates.handle(Repository, { org_id, name: repo_name }, create, this.context('repository')).catch((error) => rethrowUnless(error, 'conflict', null));
    const { state } = await this.aggregates.load(Repository, { org_id, name: repo_name });
    await this.record({ type: 'RecordForkRepositoryReady', created: state.repo_id === repo_id });
  }

  /** The tag in the target repository, holding the new commit: the fork is done. */
  async tagCommit(): Promise<void> {
    const { org_id, repo_name, tag_name, tag_id, commit_id } = this.request;
    const stream = Repository.stream({ org_id, name: repo_name });
    const command = { type: 'CreateRepoTag' as const, tag_id, tag_name, commit_id, description: null, now: new Date().toISOString() };
    try {
      await this.holds.pointAt(
        commit_id,
        { tag_id, label: `repo ${repo_name}:${tag_name}`, stream, org_id },
        this.context('hold'),
        () => this.aggregates.handle(Repository, { org_id, name: repo_name }, command, this.context('tag')),
        () => this.aggregates.check(Repository, { org_id, name: repo_name }, command, this.context('tag')),
      );
    } catch (error) {
      if (!(error instanceof DomainError) || error.kind === 'failed') throw error;
      return this.abort(error.kind === 'conflict' ? 'conflict' : 'not_found', error.message);
    }
    await this.record({ type: 'RecordRepoForked', now: new Date().toISOString() });
  }

  /**
   * Removes what the fork made, whatever of it exists: its VM (waited out until destroyed), its
   * commit, and the repository it created if no other tag has come into it since. Then the
   * failure is final.
   */
  async cleanUp(): Promise<void> {
    const { vm_id, commit_id, org_id, repo_name, repo_id, tag_id } = this.request;
    const vm = await this.aggregates.load(Vm, vm_id);
    if (vm.state.lifecycle !== 'none' && vm.state.lifecycle !== 'deleted') {
      const deletion = await this.aggregates.handle(Vm, vm_id, { type: 'RequestVmDeletion' }, this.context('delete-vm')).catch((error) => rethrowUnless(error, 'conflict', null));
      if (!deletion) throw new Error(`the fork's VM ${vm_id} is busy; deleting it again later`);
      const { outcome } = await awaitOutcome(this.aggregates.store, Vm, vm_id, 'VmDeletionRequested', deletion.revision - deletion.events.length, this.timeoutMs);
      if (!outcome.succeeded) throw outcome.error;
    }
    // Only the fork's own commit (taken of its VM): an id someone else's commit took first is theirs.
    const commit = await this.aggregates.load(Commit, commit_id);
    if (commit.state.status === 'created' && commit.state.parent_vm_id === vm_id) {
      await this.holds.release(commit_id, tag_id, this.context('release'));
      await this.aggregates.handle(Commit, commit_id, { type: 'DeleteCommit', now: new Date().toISOString() }, this.context('delete-commit'));
    }
    // What the api reserved for a VM or a commit never made is given back (a deleted one's by the worker).
    const now = new Date().toISOString();
    if ((await this.aggregates.load(Vm, vm_id)).state.lifecycle === 'none') {
      await this.aggregates.handle(OrgUsage, org_id, { type: 'ReleaseVmResources', org_id, vm_id, now }, this.context('release-vm-share'));
    }
    if ((await this.aggregates.load(Commit, commit_id)).state.status === 'none') {
      await this.aggregates.handle(OrgUsage, org_id, { type: 'ReleaseCommitStorage', org_id, commit_id, now }, this.context('release-commit-storage'));
    }
    const repository = await this.aggregates.load(Repository, { org_id, name: repo_name });
    if (this.state.repository_created && repository.state.repo_id === repo_id && Object.keys(repository.state.tags).length === 0) {
      await this.aggregates.handle(Repository, { org_id, name: repo_name }, { type: 'DeleteRepository', now: new Date().toISOString() }, this.context('delete-repository'));
    }
    await this.record({ type: 'RecordForkFailed', now: new Date().toISOString() });
  }

  /** Waits for the VM's intent to end; on failure aborts the fork with the VM's reason. */
  private async settle(aggregate: typeof Vm, vm_id: string, intent: 'VmCreationRequested' | 'VmCommitRequested', afterRevision: number): Promise<boolean> {
    const { outcome } = await awaitOutcome(this.aggregates.store, aggregate, vm_id, intent, afterRevision, this.timeoutMs).catch((error: Error) => ({
      outcome: { succeeded: false as const, error: new DomainError('failed', `the fork's VM did not answer in time: ${error.message}`) },
    }));
    if (outcome.succeeded) return true;
    await this.abort('failed', outcome.error.message);
    return false;
  }

  private abort(kind: ForkFailureKind, reason: string): Promise<void> {
    return this.record({ type: 'AbortFork', kind, reason });
  }

  private async record(command: ForkCommand): Promise<void> {
    await this.aggregates.handle(Fork, this.request.fork_id, command, this.context(command.type));
  }

  /**
   * The context of a step: caused by the fork's request, its command id fixed by the step's name,
   * acted as the key that asked for the fork (what the steps make is that key's user's: the role rule).
   */
  private context(step: string) {
    return { ...causedBy(this.intent, 'fork', step), actor_key_id: this.intent.metadata.actor_key_id };
  }
}

/** A DomainError of `kind` gives `fallback`; anything else goes on up. */
function rethrowUnless<T>(error: unknown, kind: DomainError['kind'], fallback: T): T {
  if (error instanceof DomainError && error.kind === kind) return fallback;
  throw error;
}
