import { Inject, Injectable } from '@nestjs/common';
import { waitUntil, ARBOR_CONFIG, type ArborConfig } from '@arbor/application';
import { notFound } from '@arbor/domain';
import { READ_MODEL_STORE, type ReadModelStore, VMS_COLLECTION, type VmDocument, type VmReadState } from '@arbor/read-models';
import { HttpError } from '../http/http-error';

/** Reads of the `vms` read model, always scoped to the caller's org. */
@Injectable()
export class VmReadModel {
  constructor(
    @Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore,
    @Inject(ARBOR_CONFIG) private readonly config: ArborConfig,
  ) {}

  /** The same reads over another store: the read models as of a log position (ReadModelsAsOf). */
  over(store: ReadModelStore): VmReadModel {
    return new VmReadModel(store, this.config);
  }

  /** The org's VM, deleted or not; another org's VM is reported exactly like a missing one. */
  async find(org_id: string, vm_id: string): Promise<VmDocument | null> {
    return this.readModels.findOne<VmDocument>(VMS_COLLECTION, { _id: vm_id, org_id });
  }

  /** The org's live (not deleted) VM, or a 404. */
  async get(org_id: string, vm_id: string): Promise<VmDocument> {
    const vm = await this.find(org_id, vm_id);
    if (!vm || vm.deleted_at) throw notFound('vm');
    return vm;
  }

  /** Every org's VMs that are not deleted, counted by state: for /metrics, never for a caller. */
  async countByStateInstallationWide(): Promise<Record<VmReadState, number>> {
    const states: VmReadState[] = ['booting', 'running', 'paused', 'dead'];
    const counts = await Promise.all(states.map((state) => this.readModels.count(VMS_COLLECTION, { deleted_at: null, state })));
    return Object.fromEntries(states.map((state, i) => [state, counts[i]])) as Record<VmReadState, number>;
  }

  async list(org_id: string): Promise<VmDocument[]> {
    return this.readModels.find<VmDocument>(VMS_COLLECTION, { org_id, deleted_at: null }, { sort: { created_at: 1, _id: 1 } });
  }

  /**
   * For operations that run something in the guest (exec, files): waits for a booting VM, then
   * requires it to be running (409 otherwise: a paused or dead machine cannot run anything).
   */
  async requireRunning(org_id: string, vm_id: string): Promise<VmDocument> {
    const vm = await this.waitUntilBooted(org_id, vm_id, false);
    if (vm.state !== 'running') throw new HttpError(409, `vm is ${vm.state}`);
    return vm;
  }

  /**
   * Operations that need the guest wait for a booting VM (the contract's default), or fail at
   * once with `skip_wait_boot=true`.
   */
  async waitUntilBooted(org_id: string, vm_id: string, skipWaitBoot: boolean): Promise<VmDocument> {
    const vm = await this.get(org_id, vm_id);
    if (vm.state !== 'booting') return vm;
    if (skipWaitBoot) throw new HttpError(409, 'vm is still booting');
    return waitUntil(
      `vm ${vm_id} to finish booting`,
      async () => {
        const current = await this.get(org_id, vm_id);
        return current.state === 'booting' ? undefined : current;
      },
      // A commit of the projector in this process may have recorded the boot: look again at once.
      { timeoutMs: this.config.waitTimeoutMs, intervalMs: 10, wake: (listener) => this.readModels.onCommitted(() => listener()) },
    );
  }
}
