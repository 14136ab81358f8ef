import { DOMAINS_COLLECTION, VMS_COLLECTION, type DomainDocument, type ReadModelStore, type VmDocument } from '@arbor/read-models';
import type { EdgeName } from './edge-names';

/** Where a connection goes (the VM's address), or why it goes nowhere (an HTTP status and a reason for the client). */
export type Route = { ok: true; vm_id: string; address: string } | { ok: false; vm_id: string | null; status: 404 | 502 | 503; reason: string };

/**
 * The edge's routes, read from the read models for each connection: only a VM that exists and
 * runs is routed. A VM is reachable as soon as its creation answers (the api answers after the
 * read models show it running) and unreachable as soon as its deletion is asked for. A paused VM
 * is refused at once, saying how to resume it: waiting would hold the client for as long as the
 * VM stays paused, and the Vers CLI resumes a paused VM before it connects anyway.
 */
export class RouteTable {
  constructor(private readonly readModels: ReadModelStore) {}

  async route(name: EdgeName): Promise<Route> {
    if (name.kind === 'vm') return this.vm(name.vm_id, `vm ${name.vm_id}`);
    const domain = await this.readModels.findOne<DomainDocument>(DOMAINS_COLLECTION, { domain: name.domain });
    if (!domain) return { ok: false, vm_id: null, status: 404, reason: `no VM has the domain ${name.domain}` };
    return this.vm(domain.vm_id, `vm ${domain.vm_id} (domain ${name.domain})`);
  }

  private async vm(vm_id: string, what: string): Promise<Route> {
    const vm = await this.readModels.findOne<VmDocument>(VMS_COLLECTION, { _id: vm_id });
    if (!vm || vm.deleted_at !== null || vm.deleting) return { ok: false, vm_id, status: 404, reason: `${what} does not exist` };
    switch (vm.state) {
      case 'running':
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
