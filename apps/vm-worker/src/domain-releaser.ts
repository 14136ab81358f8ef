import { causedBy, type AggregateRepository } from '@arbor/application';
import { CustomDomain, deterministicUuid, Vm } from '@arbor/domain';
import type { RecordedEvent } from '@arbor/event-store';
import type { StreamReactor } from './stream-reactor';
import type { VmPlacements } from './vm-placements';
import { type Log, silentLog } from '@arbor/observability';

/**
 * Deleting a VM frees its custom domains: for each name a deleted VM still holds, DomainRemoved
 * (reason `vm_deleted`), caused by the VM's VmDeleted and correlated with the request that
 * deleted it. Every name in use stays known to the worker (and so is reacted to on start and
 * resynced), and the names of each VM are remembered, so a VmDeleted passing in the log reacts
 * on that VM's names at once, and the checkpoint moves past it only once they are free. A name
 * added while its VM was being deleted is freed by its own reaction (the VM is found deleted).
 * The VM's worker does it (any worker while the VM is not placed yet).
 */
export class DomainReleaser implements StreamReactor {
  readonly aggregate = CustomDomain;
  /** The VM each name in use was last seen held by, and the other way round. */
  private readonly vmOf = new Map<string, string>();
  private readonly namesOf = new Map<string, Set<string>>();

  constructor(
    private readonly aggregates: AggregateRepository,
    private readonly placements: VmPlacements,
    private readonly log: Log = silentLog,
  ) {}

  relatedTo(event: RecordedEvent): string[] {
    if (event.type !== 'VmDeleted') return [];
    return [...(this.namesOf.get((event.data as { vm_id: string }).vm_id) ?? [])];
  }

  async react(name: string): Promise<boolean> {
    const { state } = await this.aggregates.load(CustomDomain, name);
    this.forget(name);
    const held = state.held;
    if (!held || (await this.placements.elsewhere(held.vm_id))) return false;
    // Remembered before the VM is read: a VmDeleted appended after this read is followed after it.
    this.remember(name, held.vm_id);
    const { state: vm, recorded } = await this.aggregates.load(Vm, held.vm_id);
    if (vm.lifecycle !== 'deleted' && vm.lifecycle !== 'none') return true;
    // Caused by the deletion; a VM with no stream at all (never the api's doing) gets the domain's own context.
    const deletion = recorded.findLast((event) => event.type === 'VmDeleted');
    const command_id = deterministicUuid(held.domain_id, 'ReleaseDomain');
    const context = deletion
      ? causedBy(deletion, 'ReleaseDomain', name)
      : { command_id, correlation_id: command_id, causation_id: held.domain_id, actor_key_id: null, org_id: held.org_id };
    await this.aggregates.handle(CustomDomain, name, { type: 'ReleaseDomain', vm_id: held.vm_id, now: new Date().toISOString() }, context);
    this.log.info(`worker: domain ${name} released: its VM ${held.vm_id} is deleted`);
    this.forget(name);
    return false;
  }

  private remember(name: string, vm_id: string): void {
    this.vmOf.set(name, vm_id);
    const names = this.namesOf.get(vm_id) ?? new Set<string>();
    names.add(name);
    this.namesOf.set(vm_id, names);
  }

  private forget(name: string): void {
    const vm_id = this.vmOf.get(name);
    if (vm_id === undefined) return;
    this.vmOf.delete(name);
    const names = this.namesOf.get(vm_id);
    names?.delete(name);
    if (names?.size === 0) this.namesOf.delete(vm_id);
  }
}
