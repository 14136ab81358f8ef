import type { VmCommand, VmEvent, VmState } from '../../../libs/domain/src';
import { deterministicUuid, isVmIntent, streams, vmDecider } from '../../../libs/domain/src';
import { handleCommand } from '../../../libs/application/src/aggregate-repository';
import type { CommandContext } from '../../../libs/application/src/command-context';
import { toDomainEvent } from '../../../libs/application/src/event-envelope';
import type { EventStore, RecordedEvent } from '../../../libs/event-store/src/event-store.port';
import type { HypervisorDriver, MachineState } from '../../../libs/hypervisor/src/hypervisor-driver.port';
import type { StreamReactor } from './stream-reactor';

/**
 * Level-triggered reconciliation of one VM (Kubernetes-controller style): compare what the log
 * says the VM should be with what the host actually runs, make one corrective driver call, and
 * report the outcome as an event. Running it twice in a row does nothing the second time, so
 * replaying intents after a crash is safe.
 */
export class VmReconciler implements StreamReactor {
  readonly prefix = 'vm-';

  constructor(
    private readonly events: EventStore,
    private readonly driver: HypervisorDriver,
    private readonly log: (line: string) => void = () => {},
  ) {}

  async discover(): Promise<string[]> {
    return (await this.driver.list()).map((machine) => machine.vm_id);
  }

  /** Returns true while the VM still needs this host (it is not deleted). */
  async react(vm_id: string): Promise<boolean> {
    const recorded = await this.events.readStream(streams.vm(vm_id));
    const state = recorded.map((r) => toDomainEvent<VmEvent>(r)).reduce(vmDecider.evolve, vmDecider.initialState());
    const machine = await this.driver.status(vm_id);
    const intent = lastIntent(recorded);

    switch (state.lifecycle) {
      case 'none':
      case 'deleted':
        if (machine !== null) await this.destroyOrphan(vm_id);
        return false;
      case 'deleting':
        await this.delete(vm_id, intent);
        return false;
      case 'dead':
        if (machine !== null) await this.destroyOrphan(vm_id);
        return true;
      case 'booting':
        await this.boot(vm_id, state, machine, intent);
        return true;
      case 'running':
      case 'paused':
        await this.converge(vm_id, state, machine, intent);
        return true;
    }
  }

  private async boot(vm_id: string, state: VmState, machine: MachineState | null, intent: RecordedEvent | null) {
    if (machine === 'running' || machine === 'paused') {
      // Created before a crash, outcome not yet recorded: just record it.
      return this.record(vm_id, { type: 'RecordVmBooted', driver: this.driver.name, now: new Date().toISOString() }, intent);
    }
    if (machine === 'dead') await this.driver.destroy(vm_id);
    const config = state.config!;
    this.log(`worker: creating ${vm_id} on ${this.driver.name}`);
    try {
      await this.driver.create({
        vm_id,
        vcpu_count: config.vcpu_count,
        mem_size_mib: config.mem_size_mib,
        fs_size_mib: config.fs_size_mib,
        image_name: config.image_name,
        env: state.env,
        identity: { hostname: vm_id, ssh_authorized_key: null },
      });
    } catch (error) {
      const reason = (error as Error).message;
      this.log(`worker: creating ${vm_id} failed: ${reason}`);
      await this.driver.destroy(vm_id).catch(() => undefined);
      return this.record(vm_id, { type: 'RecordVmBootFailed', reason }, intent);
    }
    const outcome = await this.record(vm_id, { type: 'RecordVmBooted', driver: this.driver.name, now: new Date().toISOString() }, intent);
    if (outcome.length === 0) {
      // Deleted while it booted: the log no longer wants the machine.
      await this.react(vm_id);
    }
  }

  private async converge(vm_id: string, state: VmState, machine: MachineState | null, intent: RecordedEvent | null) {
    if (machine === null || machine === 'dead') {
      return this.record(vm_id, { type: 'RecordVmDied', reason: machine === null ? 'the machine is gone from the host' : 'the machine stopped' }, null, state.org_id);
    }
    const wantPaused = state.pending === 'pause' || (state.pending === null && state.lifecycle === 'paused');
    try {
      if (wantPaused && machine === 'running') await this.driver.pause(vm_id);
      if (!wantPaused && machine === 'paused') await this.driver.resume(vm_id);
    } catch (error) {
      if (!state.pending) throw error;
      return this.record(vm_id, { type: 'RecordVmOperationFailed', operation: state.pending, reason: (error as Error).message }, intent);
    }
    if (state.pending === 'pause') await this.record(vm_id, { type: 'RecordVmPaused' }, intent);
    if (state.pending === 'resume') await this.record(vm_id, { type: 'RecordVmResumed' }, intent);
  }

  private async delete(vm_id: string, intent: RecordedEvent | null) {
    try {
      await this.driver.destroy(vm_id);
    } catch (error) {
      return this.record(vm_id, { type: 'RecordVmOperationFailed', operation: 'delete', reason: (error as Error).message }, intent);
    }
    await this.record(vm_id, { type: 'RecordVmDeleted', now: new Date().toISOString() }, intent);
  }

  private async destroyOrphan(vm_id: string) {
    this.log(`worker: destroying ${vm_id}: the log does not want it on this host`);
    await this.driver.destroy(vm_id);
  }

  /** Appends an outcome, caused by the intent it answers and correlated with its request. */
  private async record(vm_id: string, command: VmCommand, intent: RecordedEvent | null, org_id: string | null = null): Promise<VmEvent[]> {
    const context: CommandContext = {
      command_id: deterministicUuid(intent?.id ?? vm_id, command.type, intent ? '' : String(Date.now())),
      correlation_id: intent?.metadata.correlation_id ?? deterministicUuid(vm_id, command.type),
      causation_id: intent?.id ?? vm_id,
      actor_key_id: null,
      org_id: intent?.metadata.org_id ?? org_id,
    };
    const result = await handleCommand(this.events, streams.vm(vm_id), vmDecider, command, context);
    return result.events;
  }
}

function lastIntent(recorded: RecordedEvent[]): RecordedEvent | null {
  for (let i = recorded.length - 1; i >= 0; i--) if (isVmIntent(recorded[i].type)) return recorded[i];
  return null;
}
