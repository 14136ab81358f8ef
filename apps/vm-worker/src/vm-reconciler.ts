import { causedBy, withoutSealedValues, type AggregateRepository, type CommandContext, type DataDiskFloor, type OrgQuotas } from '@arbor/application';
import { Commit, deterministicUuid, DomainError, Image, Vm, VM_CONFIG_DEFAULTS, type CommitCommand, type VmCommand, type VmCommitRequested, type VmEvent, type VmState } from '@arbor/domain';
import type { RecordedEvent } from '@arbor/event-store';
import type { HypervisorDriver, MachineAddresses, MachineInfo, MachineState } from '@arbor/hypervisor';
import type { Log } from '@arbor/observability';
import { replaceAuthorizedKey } from './authorized-key';
import type { StreamReactor } from './stream-reactor';
import type { VmPlacements } from './vm-placements';

/** The bounds the reconciler keeps: the org's usage (released, commits measured) and the data disk's floor. */
export interface ReconcilerBounds {
  quotas: OrgQuotas;
  disk: DataDiskFloor;
}

/**
 * Level-triggered reconciliation of one VM (Kubernetes-controller style): compare what the log
 * says the VM should be with what the host actually runs, make one corrective driver call, and
 * report the outcome as an event. Running it twice in a row does nothing the second time, so
 * replaying intents after a crash is safe.
 */
export class VmReconciler implements StreamReactor {
  readonly aggregate = Vm;
  readonly machineWork = true;
  /**
   * VMs last found converged (the machine as the log wants it, nothing pending), with the stream
   * revision and machine state seen then. While both still read the same, reacting again would
   * change nothing, so a resync costs one status call and one read of the stream's last event
   * instead of a fold: with thousands of VMs, the periodic resync no longer reloads every stream.
   */
  private readonly converged = new Map<string, { revision: number; machine: MachineState | null }>();

  constructor(
    private readonly aggregates: AggregateRepository,
    private readonly driver: HypervisorDriver,
    private readonly placements: VmPlacements,
    private readonly log: Log,
    private readonly bounds: ReconcilerBounds,
  ) {}

  async discover(): Promise<string[]> {
    return (await this.driver.list()).map((machine) => machine.vm_id);
  }

  /** Returns true while the VM still needs this host (it is not deleted, and it lives here). */
  async react(vm_id: string): Promise<boolean> {
    const seen = this.converged.get(vm_id);
    this.converged.delete(vm_id);
    if (seen && (await this.unchangedSince(vm_id, seen))) {
      this.converged.set(vm_id, seen);
      return true;
    }
    const { state, recorded, revision } = await this.aggregates.load(Vm, vm_id);
    const machine = await this.driver.status(vm_id);
    const intent = lastIntent(recorded);

    if (state.lifecycle === 'none' || state.lifecycle === 'deleted') {
      if (machine !== null) await this.destroyOrphan(vm_id);
      this.placements.forget(vm_id);
      return false;
    }
    if (!(await this.placedHere(vm_id, state, machine, intent))) {
      // Another host's VM (or one this host cannot start): a machine of that name here is unwanted.
      if (machine !== null && (await this.placements.elsewhere(vm_id))) await this.destroyOrphan(vm_id);
      return false;
    }
    switch (state.lifecycle) {
      case 'deleting':
        await this.delete(vm_id, state, intent);
        return false;
      case 'dead':
        if (machine !== null) await this.destroyOrphan(vm_id);
        else this.converged.set(vm_id, { revision, machine });
        return true;
      case 'booting':
        await this.boot(vm_id, state, machine, intent);
        return true;
      case 'running':
      case 'paused':
        if (state.pending === null && machine === (state.lifecycle === 'paused' ? 'paused' : 'running')) this.converged.set(vm_id, { revision, machine });
        else await this.converge(vm_id, state, machine, intent);
        return true;
    }
  }

  /** Whether the VM's stream and its machine still read as they did when it was found converged. */
  private async unchangedSince(vm_id: string, seen: { revision: number; machine: MachineState | null }): Promise<boolean> {
    if ((await this.driver.status(vm_id)) !== seen.machine) return false;
    const [last] = await this.aggregates.store.readStream(Vm.stream(vm_id), { direction: 'backwards', max_count: 1 });
    return last?.revision === seen.revision;
  }

  /**
   * Whether this worker looks after the VM. Once placed, only the worker it is placed on. Not yet
   * placed, a worker claims it (the first claim wins) if it can take it: a root VM, any worker; a
   * VM from a commit, the worker holding the snapshot (or, should no host hold it any more, the
   * worker of the VM the commit was taken from, which then fails the boot); a VM from before
   * placements existed, the worker whose host has its machine; a deletion, any worker.
   */
  private async placedHere(vm_id: string, state: VmState, machine: MachineState | null, intent: RecordedEvent | null): Promise<boolean> {
    const owner = await this.placements.ownerOf(vm_id);
    if (owner !== null) return owner === this.placements.workerId;
    const canTake =
      machine !== null ||
      state.lifecycle === 'deleting' ||
      state.lifecycle === 'dead' ||
      (state.lifecycle === 'booting' && (await this.canStart(state)));
    if (!canTake) return false;
    const context = this.outcomeContext(vm_id, `PlaceVm ${this.placements.workerId}`, intent, state.org_id);
    return this.placements.claim(vm_id, context);
  }

  private async canStart(state: VmState): Promise<boolean> {
    // A VM of a custom image boots where the image was built (or, should that host have lost it,
    // on the worker that built it, which then fails the boot saying so).
    if (state.image_id) return (await this.driver.getImage(state.image_id)) !== null || (await this.aggregates.load(Image, state.image_id)).state.worker_id === this.placements.workerId;
    if (!state.parent_commit_id) return true;
    if (await this.driver.getSnapshot(state.parent_commit_id)) return true;
    return state.grandparent_vm_id !== null && (await this.placements.ownerOf(state.grandparent_vm_id)) === this.placements.workerId;
  }

  private async boot(vm_id: string, state: VmState, machine: MachineState | null, intent: RecordedEvent | null) {
    if (machine === 'running' || machine === 'paused') {
      // Created before a crash, outcome not yet recorded: just record it.
      return this.recordBooted(vm_id, await this.driver.addresses(vm_id), intent);
    }
    if (machine === 'dead') await this.driver.destroy(vm_id);
    if (state.parent_commit_id) {
      // The VM holds its commit before the machine uses the snapshot; a deleted commit is final.
      const refused = await this.useCommit(vm_id, state, intent);
      if (refused) return this.failBoot(vm_id, state, refused, intent);
    }
    if (state.image_id) {
      const refused = await this.useImage(vm_id, state, intent);
      if (refused) return this.failBoot(vm_id, state, refused, intent);
    }
    // Checked again here (the api did): the disk it would fill may be this host's, not the api's.
    const shortfall = await this.bounds.disk.check();
    if (shortfall) return this.failBoot(vm_id, state, shortfall.message, intent);
    const config = state.config!;
    const identity = { hostname: vm_id, ssh_authorized_key: state.ssh_public_key };
    // Values whose key was shredded meanwhile can never be read: the VM boots without them.
    const env = withoutSealedValues(state.env);
    // An org's VMs share a network group: they reach each other, never another org's.
    const network_group = state.org_id!;
    this.log.info(`worker: creating ${vm_id} on ${this.driver.name}${state.parent_commit_id ? ` from commit ${state.parent_commit_id}` : ''}`);
    let info: MachineInfo;
    try {
      if (state.parent_commit_id) {
        info = await this.driver.startFromSnapshot(state.parent_commit_id, { vm_id, env, identity, network_group });
      } else {
        const { vcpu_count, mem_size_mib, fs_size_mib } = config;
        // A custom image is named by its id; `image_name` then stays the built-in one's (the port's rule).
        const image = state.image_id ? { image_name: VM_CONFIG_DEFAULTS.image_name, image_id: state.image_id } : { image_name: config.image_name };
        info = await this.driver.create({ vm_id, vcpu_count, mem_size_mib, fs_size_mib, ...image, env, identity, network_group });
      }
    } catch (error) {
      return this.failBoot(vm_id, state, (error as Error).message, intent);
    }
    const outcome = await this.recordBooted(vm_id, info.addresses ?? (await this.driver.addresses(vm_id)), intent);
    if (outcome.length === 0) {
      // Deleted while it booted: the log no longer wants the machine.
      await this.react(vm_id);
    }
  }

  /** The machine is up: its addresses (the edge routes to them) and its boot, in one append. */
  private recordBooted(vm_id: string, addresses: MachineAddresses | null, intent: RecordedEvent | null) {
    const network = addresses && { ipv6: addresses.ipv6, ipv4: addresses.ipv4 };
    return this.record(vm_id, { type: 'RecordVmBooted', driver: this.driver.name, network, now: new Date().toISOString() }, intent);
  }

  /**
   * A VM that cannot boot is cleaned up (docs/api-behaviour.md#vm-lifecycle): whatever the attempt left on the host
   * is destroyed, then the failure (with its reason) and the VM's deletion are appended together.
   * Should the destroy fail, the VM is still deleted in the log; the machine is then an orphan
   * that the next reconcile destroys (the stream stays known until it succeeds).
   */
  private async failBoot(vm_id: string, state: VmState, reason: string, intent: RecordedEvent | null) {
    this.log.warn(`worker: creating ${vm_id} failed: ${reason}`);
    await this.driver.destroy(vm_id).catch((error) => this.log.warn(`worker: cleaning up ${vm_id} failed: ${(error as Error).message}`));
    await this.releaseCommit(vm_id, state, intent);
    await this.releaseImage(vm_id, state, intent);
    await this.releaseShare(vm_id, state, intent);
    await this.record(vm_id, { type: 'RecordVmBootFailed', reason, now: new Date().toISOString() }, intent);
  }

  private async converge(vm_id: string, state: VmState, machine: MachineState | null, intent: RecordedEvent | null) {
    if (machine === null || machine === 'dead') {
      const reason = machine === null ? 'the machine is gone from the host' : 'the machine stopped';
      return this.record(vm_id, { type: 'RecordVmDied', reason }, null, state.org_id);
    }
    const pending = state.pending;
    try {
      switch (pending?.kind) {
        case 'commit':
          return await this.commit(vm_id, state, pending, intent);
        case 'resize':
          await this.requireDiskAboveFloor();
          await this.driver.resizeDisk(vm_id, pending.fs_size_mib);
          return await this.record(vm_id, { type: 'RecordVmDiskResized' }, intent);
        case 'rekey':
          // Written again after a crash before the outcome: the same key in the same place.
          await replaceAuthorizedKey(this.driver, vm_id, pending.ssh_public_key);
          return await this.record(vm_id, { type: 'RecordVmSshKeyRotated' }, intent);
      }
      // Pause/resume, and drift: bring the machine to the state the log wants.
      const wantPaused = pending?.kind === 'pause' || (pending === null && state.lifecycle === 'paused');
      if (wantPaused && machine === 'running') await this.driver.pause(vm_id);
      if (!wantPaused && machine === 'paused') await this.driver.resume(vm_id);
    } catch (error) {
      if (!pending) throw error;
      // A commit that was not taken holds none of the org's commit storage.
      if (pending.kind === 'commit') await this.bounds.quotas.releaseCommit(state.org_id!, pending.commit_id, this.outcomeContext(vm_id, 'ReleaseCommitStorage', intent, state.org_id));
      return this.record(vm_id, { type: 'RecordVmOperationFailed', operation: pending.kind, reason: (error as Error).message }, intent);
    }
    if (pending?.kind === 'pause') await this.record(vm_id, { type: 'RecordVmPaused' }, intent);
    if (pending?.kind === 'resume') await this.record(vm_id, { type: 'RecordVmResumed' }, intent);
  }

  /**
   * Snapshot first, then the commit's own stream, then the VM's outcome: a crash between steps
   * is finished by the next reconcile (an existing snapshot is not taken again).
   */
  private async commit(vm_id: string, state: VmState, pending: { commit_id: string; keep_paused: boolean }, intent: RecordedEvent | null) {
    const existing = await this.driver.getSnapshot(pending.commit_id);
    if (existing && existing.source_vm_id !== vm_id) throw new Error(`commit id ${pending.commit_id} is already used by another commit`);
    if (!existing) await this.requireDiskAboveFloor();
    const snapshot = existing ?? (await this.driver.commit(vm_id, pending.commit_id, { keep_paused: pending.keep_paused }));
    // What the commit takes on this host's disk counts against its org (it replaces the api's reservation).
    const measured = this.outcomeContext(vm_id, 'MeasureCommitStorage', intent, state.org_id);
    await this.bounds.quotas.measureCommit(state.org_id!, pending.commit_id, snapshot.size_bytes ?? 0, measured);
    const request = intent?.type === 'VmCommitRequested' ? (intent.data as VmCommitRequested['data']) : null;
    const context = this.outcomeContext(vm_id, 'RecordCommitCreated', intent, state.org_id);
    await this.aggregates.handle(
      Commit,
      pending.commit_id,
      {
        type: 'RecordCommitCreated',
        commit_id: pending.commit_id,
        org_id: state.org_id!,
        owner_id: intent?.metadata.actor_key_id ?? state.owner_id!,
        name: request?.name ?? pending.commit_id,
        description: request?.description ?? null,
        parent_vm_id: vm_id,
        grandparent_commit_id: state.parent_commit_id,
        includes_memory: snapshot.includes_memory,
        config: state.config!,
        driver: this.driver.name,
        created_at: snapshot.created_at,
      },
      context,
    );
    await this.record(vm_id, { type: 'RecordVmCommitted', includes_memory: snapshot.includes_memory }, intent);
  }

  private async delete(vm_id: string, state: VmState, intent: RecordedEvent | null) {
    try {
      await this.driver.destroy(vm_id);
    } catch (error) {
      return this.record(vm_id, { type: 'RecordVmOperationFailed', operation: 'delete', reason: (error as Error).message }, intent);
    }
    // Released before VmDeleted, so once a delete is answered the commit can be deleted too, and
    // the org's quota has the VM's share back.
    await this.releaseCommit(vm_id, state, intent);
    await this.releaseImage(vm_id, state, intent);
    await this.releaseShare(vm_id, state, intent);
    await this.record(vm_id, { type: 'RecordVmDeleted', now: new Date().toISOString() }, intent);
  }

  /** The machine is gone: its share of the org's quotas is free again. */
  private async releaseShare(vm_id: string, state: VmState, intent: RecordedEvent | null) {
    await this.bounds.quotas.releaseVm(state.org_id!, vm_id, this.outcomeContext(vm_id, 'ReleaseVmResources', intent, state.org_id));
  }

  /** Refuses to make disks or snapshots while the data disk is below its floor (the reason says so). */
  private async requireDiskAboveFloor() {
    const shortfall = await this.bounds.disk.check();
    if (shortfall) throw new Error(shortfall.message);
  }

  /**
   * Claims the VM's use of its commit on the commit's stream (the API normally has already; this
   * covers an API that stopped between its two appends). Returns why the commit cannot be used.
   */
  private async useCommit(vm_id: string, state: VmState, intent: RecordedEvent | null): Promise<string | null> {
    const commit_id = state.parent_commit_id!;
    const command: CommitCommand = {
      type: 'UseCommit',
      vm_id,
      org_id: state.org_id!,
      through_public_repository: state.through_public_repository,
      now: new Date().toISOString(),
    };
    try {
      await this.aggregates.handle(Commit, commit_id, command, this.outcomeContext(vm_id, command.type, intent, state.org_id));
      return null;
    } catch (error) {
      if (error instanceof DomainError && error.kind === 'not_found') return `commit ${commit_id} not found`;
      throw error;
    }
  }

  /** The VM's machine is gone: it no longer holds the commit it started from. */
  private async releaseCommit(vm_id: string, state: VmState, intent: RecordedEvent | null) {
    if (!state.parent_commit_id) return;
    const command: CommitCommand = { type: 'ReleaseCommit', vm_id, now: new Date().toISOString() };
    await this.aggregates.handle(Commit, state.parent_commit_id, command, this.outcomeContext(vm_id, command.type, intent, state.org_id));
  }

  /**
   * Claims the VM's use of its image on the image's stream (the API has, normally; this covers an
   * API that stopped between its two appends). Returns why the image cannot be used.
   */
  private async useImage(vm_id: string, state: VmState, intent: RecordedEvent | null): Promise<string | null> {
    const image_id = state.image_id!;
    try {
      await this.aggregates.handle(Image, image_id, { type: 'UseImage', vm_id, org_id: state.org_id!, now: new Date().toISOString() }, this.outcomeContext(vm_id, 'UseImage', intent, state.org_id));
      return null;
    } catch (error) {
      if (error instanceof DomainError && error.kind === 'not_found') return `image ${state.config?.image_name ?? image_id} not found`;
      throw error;
    }
  }

  /** The VM's machine is gone: it no longer holds its image (which may then be deleted). */
  private async releaseImage(vm_id: string, state: VmState, intent: RecordedEvent | null) {
    if (!state.image_id) return;
    await this.aggregates.handle(Image, state.image_id, { type: 'ReleaseImage', vm_id, now: new Date().toISOString() }, this.outcomeContext(vm_id, 'ReleaseImage', intent, state.org_id));
  }

  private async destroyOrphan(vm_id: string) {
    this.log.info(`worker: destroying ${vm_id}: the log does not want it on this host`);
    await this.driver.destroy(vm_id);
  }

  /** Appends an outcome, caused by the intent it answers and correlated with its request. */
  private async record(vm_id: string, command: VmCommand, intent: RecordedEvent | null, org_id: string | null = null): Promise<VmEvent[]> {
    const context = this.outcomeContext(vm_id, command.type, intent, org_id);
    return (await this.aggregates.handle(Vm, vm_id, command, context)).events;
  }

  /**
   * An outcome answers the VM's last intent (see causedBy). Drift found with no intent to answer
   * (a machine that died) is the worker's own observation, made once per moment.
   */
  private outcomeContext(vm_id: string, outcome: string, intent: RecordedEvent | null, org_id: string | null): CommandContext {
    if (intent) return causedBy(intent, outcome, '');
    return { command_id: deterministicUuid(vm_id, outcome, String(Date.now())), correlation_id: deterministicUuid(vm_id, outcome), causation_id: vm_id, actor_key_id: null, org_id };
  }
}

/** The VM's last intent: what its outcomes answer (an intent is an event with outcome rules). */
function lastIntent(recorded: RecordedEvent[]): RecordedEvent | null {
  for (let i = recorded.length - 1; i >= 0; i--) if (Vm.outcomes[recorded[i].type as VmEvent['type']]) return recorded[i];
  return null;
}
