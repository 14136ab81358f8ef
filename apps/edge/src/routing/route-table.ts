import { PROJECTOR_CHECKPOINT } from '@arbor/application';
import { CustomDomain, Vm, aggregateOfStream } from '@arbor/domain';
import { DOMAINS_COLLECTION, VMS_COLLECTION, type DomainDocument, type ReadModelStore, type VmDocument } from '@arbor/read-models';
import type { EdgeName } from './edge-names';

/** Where a connection goes (the VM's address), or why it goes nowhere (an HTTP status and a reason for the client). */
export type Route = { ok: true; vm_id: string; address: string } | { ok: false; vm_id: string | null; status: 404 | 502 | 503; reason: string };

/** An event of the log as the route table needs it: where it is, and which VM or domain it changes. */
export interface LoggedChange {
  position: number;
  stream_id: string;
  data: unknown;
}

/** Past this many remembered routes the table starts again empty (a bound, not a working size). */
const MAX_REMEMBERED = 100_000;

/**
 * The edge's routes: only a VM that exists and runs is routed. A VM is reachable as soon as its
 * creation answers (the api answers after the read models show it running) and unreachable as
 * soon as its deletion is asked for. A paused VM is refused at once, saying how to resume it:
 * waiting would hold the client for as long as the VM stays paused, and the Vers CLI resumes a
 * paused VM before it connects anyway.
 *
 * The read models decide. A route they gave is remembered (a running VM's address, a custom
 * domain's VM) so that the next connection skips the read, but only while the log, as this edge
 * follows it (`changed`), is known to be at least as far as the read models: every VM or domain
 * event it passes forgets what it names. Two positions make that exact:
 * - a remembered route serves only while `followed` ≥ the read models' checkpoint: every event
 *   they show has then been seen here, and any that changed the route has forgotten it;
 * - a route read from the read models is remembered only when their checkpoint, taken before the
 *   read, is ≥ `followed`: no event this edge already passed can be missing from what was read.
 * Otherwise (the edge's follower behind, or not started) every connection reads the read models,
 * as if nothing were remembered. The checkpoint is known without asking the store when the
 * projector commits through this process's store (`readModelsCommittedHere`: the embedded
 * service, where it is the read models' only writer); a separate edge asks for it per connection.
 */
export class RouteTable {
  /** Running VMs' addresses, by id. */
  private readonly vms = new Map<string, string>();
  /** Custom domains' VMs, by domain. */
  private readonly domains = new Map<string, string>();
  /** The position of the last log event passed to `changed` (-Infinity: not following yet, nothing served from memory). */
  private followed = -Infinity;
  /** The read models' checkpoint as the commits through this process report it, when they are the only ones. */
  private committed: number | null = null;
  private stopReports: (() => void) | null = null;

  constructor(
    private readonly readModels: ReadModelStore,
    private readonly options: { readModelsCommittedHere?: boolean } = {},
  ) {}

  /** Starts learning the read models' checkpoint from the commits made through this process (readModelsCommittedHere). */
  async start(): Promise<void> {
    if (!this.options.readModelsCommittedHere) return;
    let reported = -1;
    this.stopReports = this.readModels.onCommitted((checkpoint) => {
      if (checkpoint?.name !== PROJECTOR_CHECKPOINT) return;
      reported = Math.max(reported, checkpoint.position);
      if (this.committed !== null) this.committed = Math.max(this.committed, checkpoint.position);
    });
    this.committed = Math.max(reported, (await this.readModels.getCheckpoint(PROJECTOR_CHECKPOINT)) ?? -1);
  }

  stop(): void {
    this.stopReports?.();
    this.stopReports = null;
    this.committed = null;
  }

  /** The log position this edge follows from (its head when it started): nothing before it is seen here. */
  followFrom(position: number): void {
    this.followed = position;
  }

  /** One event of the log, in order: a VM's or a custom domain's event forgets its route. */
  changed(event: LoggedChange): void {
    const aggregate = aggregateOfStream(event.stream_id);
    if (aggregate === Vm || aggregate === CustomDomain) {
      const { vm_id, domain } = (event.data ?? {}) as { vm_id?: unknown; domain?: unknown };
      if (aggregate === Vm && typeof vm_id === 'string') this.vms.delete(vm_id);
      else if (aggregate === CustomDomain && typeof domain === 'string') this.domains.delete(domain);
      else this.forgetAll(); // an event that names nothing the table can find: forget everything rather than guess
    }
    this.followed = Math.max(this.followed, event.position);
  }

  /** Forgets every route (they are read again). */
  forgetAll(): void {
    this.vms.clear();
    this.domains.clear();
  }

  /**
   * The route, without waiting, when it is remembered and known to be current; undefined
   * otherwise (then `route` reads it).
   */
  known(name: EdgeName): Route | undefined {
    if (this.committed === null || this.followed < this.committed) return undefined;
    return this.remembered(name);
  }

  /** The route, from memory when that is known to be current, else from the read models. */
  async route(name: EdgeName): Promise<Route> {
    const checkpoint = this.committed ?? (await this.readModels.getCheckpoint(PROJECTOR_CHECKPOINT)) ?? -1;
    if (this.followed >= checkpoint) {
      const remembered = this.remembered(name);
      if (remembered) return remembered;
    }
    if (name.kind === 'vm') return this.vm(name.vm_id, `vm ${name.vm_id}`, checkpoint);
    const domain = await this.readModels.findOne<DomainDocument>(DOMAINS_COLLECTION, { domain: name.domain });
    if (!domain) return { ok: false, vm_id: null, status: 404, reason: `no VM has the domain ${name.domain}` };
    const route = await this.vm(domain.vm_id, `vm ${domain.vm_id} (domain ${name.domain})`, checkpoint);
    if (route.ok && this.mayRemember(checkpoint)) this.domains.set(name.domain, domain.vm_id);
    return route;
  }

  private remembered(name: EdgeName): Route | undefined {
    const vm_id = name.kind === 'vm' ? name.vm_id : this.domains.get(name.domain);
    const address = vm_id === undefined ? undefined : this.vms.get(vm_id);
    return address === undefined ? undefined : { ok: true, vm_id: vm_id!, address };
  }

  /** What was read at `checkpoint` (or later) may be remembered when no event this edge passed can be missing from it. */
  private mayRemember(checkpoint: number): boolean {
    if (checkpoint < this.followed) return false;
    if (this.vms.size + this.domains.size >= MAX_REMEMBERED) this.forgetAll();
    return true;
  }

  /** The VM's route from the read models (read after `checkpoint` was taken). */
  private async vm(vm_id: string, what: string, checkpoint: number): Promise<Route> {
    const vm = await this.readModels.findOne<VmDocument>(VMS_COLLECTION, { _id: vm_id });
    if (!vm || vm.deleted_at !== null || vm.deleting) return { ok: false, vm_id, status: 404, reason: `${what} does not exist` };
    switch (vm.state) {
      case 'running':
        if (this.mayRemember(checkpoint)) this.vms.set(vm_id, vm.ip);
        return { ok: true, vm_id, address: vm.ip };
      case 'paused':
        return { ok: false, vm_id, status: 503, reason: `${what} is paused: resume it (PATCH /api/v1/vm/${vm_id}/state {"state":"Running"}) and connect again` };
      case 'booting':
        return { ok: false, vm_id, status: 503, reason: `${what} is still booting: try again in a moment` };
      case 'dead':
        return { ok: false, vm_id, status: 502, reason: `${what} is dead${vm.failure_reason ? ` (${vm.failure_reason})` : ''}` };
    }
  }
}
