import type { AggregateRepository, CommandContext } from '@arbor/application';
import { VmPlacement } from '@arbor/domain';

/**
 * Which worker each VM lives on, as the `placement-<vm_id>` reservation streams say. A placement
 * never changes once made, so it is cached; one instance per worker, shared by its reactors.
 */
export class VmPlacements {
  private readonly owners = new Map<string, string>();

  constructor(
    private readonly aggregates: AggregateRepository,
    /** This worker (ARBOR_WORKER_ID): one per hypervisor host, stable across restarts. */
    readonly workerId: string,
  ) {}

  /** The worker the VM is placed on, or null while none has claimed it. */
  async ownerOf(vm_id: string): Promise<string | null> {
    const cached = this.owners.get(vm_id);
    if (cached) return cached;
    const { state } = await this.aggregates.load(VmPlacement, vm_id);
    if (state.worker_id) this.owners.set(vm_id, state.worker_id);
    return state.worker_id;
  }

  /** True when another worker holds the VM: this host must leave it (and its execs, files) alone. */
  async elsewhere(vm_id: string): Promise<boolean> {
    const owner = await this.ownerOf(vm_id);
    return owner !== null && owner !== this.workerId;
  }

  /** Claims the VM for this worker (first claim wins); true when it is now placed here. */
  async claim(vm_id: string, context: CommandContext): Promise<boolean> {
    const command = { type: 'PlaceVm' as const, vm_id, worker_id: this.workerId, now: new Date().toISOString() };
    const { events } = await this.aggregates.handle(VmPlacement, vm_id, command, context);
    // Appended (or found appended by this very claim: its command id names this worker): placed here.
    if (events.length > 0) {
      this.owners.set(vm_id, this.workerId);
      return true;
    }
    return (await this.ownerOf(vm_id)) === this.workerId;
  }

  /** Drops a deleted VM from the cache. */
  forget(vm_id: string): void {
    this.owners.delete(vm_id);
  }
}
