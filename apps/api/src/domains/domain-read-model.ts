import { Inject, Injectable } from '@nestjs/common';
import { ARBOR_CONFIG, type ArborConfig, waitUntil } from '@arbor/application';
import { notFound } from '@arbor/domain';
import { DOMAINS_COLLECTION, READ_MODEL_STORE, type DomainDocument, type Filter, type ReadModelStore } from '@arbor/read-models';

/** Reads of the `domains` read model; another org's domain is reported like a missing one. */
@Injectable()
export class DomainReadModel {
  constructor(
    @Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore,
    @Inject(ARBOR_CONFIG) private readonly config: ArborConfig,
  ) {}

  /** Oldest first; `vm_id` narrows to one VM's. */
  list(org_id: string, vm_id?: string): Promise<DomainDocument[]> {
    const filter: Filter = vm_id ? { org_id, vm_id } : { org_id };
    return this.readModels.find<DomainDocument>(DOMAINS_COLLECTION, filter, { sort: { created_at: 1, _id: 1 } });
  }

  /** Waits until the VM holds no domain (a deleted VM's are freed by the worker right after VmDeleted). */
  async waitUntilNoneOf(org_id: string, vm_id: string): Promise<void> {
    const none = async () => ((await this.readModels.count(DOMAINS_COLLECTION, { org_id, vm_id })) === 0 || undefined);
    // A commit of the projector in this process may have freed them: look again at once.
    const wake = (listener: () => void) => this.readModels.onCommitted(() => listener());
    await waitUntil(`the domains of vm ${vm_id} to be freed`, none, { timeoutMs: this.config.waitTimeoutMs, wake });
  }

  async get(org_id: string, domain_id: string): Promise<DomainDocument> {
    const domain = await this.readModels.findOne<DomainDocument>(DOMAINS_COLLECTION, { _id: domain_id });
    if (!domain || domain.org_id !== org_id) throw notFound('domain');
    return domain;
  }
}
