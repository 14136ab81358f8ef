import { Vm } from '@arbor/domain';
import { type WriteOp, type VmDocument, VMS_COLLECTION } from '@arbor/read-models';
import { projectionOf } from './projection';

const set = (vm_id: string, fields: Partial<VmDocument>): WriteOp => ({
  op: 'updateOne',
  collection: VMS_COLLECTION,
  filter: { _id: vm_id },
  update: { $set: fields },
});

/** The `vms` read model: what GET /vms, /vm/{id}/status and /metadata serve. */
export const vmsProjection = projectionOf(Vm, {
  name: 'vms',
  collections: [VMS_COLLECTION],
  // GET /vms's filter and then its order (created_at, _id): the embedded store walks the index and sorts nothing.
  indexes: [{ collection: VMS_COLLECTION, keys: { org_id: 1, deleted_at: 1, created_at: 1, _id: 1 } }],
  project(event): WriteOp[] {
    const vm_id = (event.data as { vm_id: string }).vm_id;
    switch (event.type) {
      case 'VmCreationRequested': {
        const d = event.data;
        const doc: VmDocument = {
          _id: d.vm_id,
          vm_id: d.vm_id,
          org_id: d.org_id,
          owner_id: d.owner_id,
          created_at: d.requested_at,
          state: 'booting',
          labels: d.labels,
          ip: d.ip,
          ipv4: null,
          config: d.config,
          parent_commit_id: d.parent_commit_id ?? null,
          grandparent_vm_id: d.grandparent_vm_id ?? null,
          ssh_key_generation: d.ssh_key_generation,
          deleting: false,
          deleted_at: null,
          failure_reason: null,
        };
        return [{ op: 'replaceOne', collection: VMS_COLLECTION, filter: { _id: d.vm_id }, doc, upsert: true }];
      }
      case 'VmBooted':
      case 'VmResumed':
        return [set(vm_id, { state: 'running' })];
      case 'VmNetworkAttached':
        return [set(vm_id, { ip: event.data.ipv6, ipv4: event.data.ipv4 })];
      case 'VmPaused':
        return [set(vm_id, { state: 'paused' })];
      case 'VmCommitted':
        return event.data.keep_paused ? [set(vm_id, { state: 'paused' })] : [];
      case 'VmDiskResized':
        return [{ op: 'updateOne', collection: VMS_COLLECTION, filter: { _id: vm_id }, update: { $set: { 'config.fs_size_mib': event.data.fs_size_mib } } }];
      case 'VmBootFailed':
      case 'VmDied':
        return [set(vm_id, { state: 'dead', failure_reason: event.data.reason })];
      case 'VmSshKeyRotated':
        return [set(vm_id, { ssh_key_generation: event.data.ssh_key_generation })];
      case 'VmLabelsSet':
        return [set(vm_id, { labels: event.data.labels })];
      case 'VmDeletionRequested':
        return [set(vm_id, { deleting: true })];
      case 'VmOperationFailed':
        return event.data.operation === 'delete' ? [set(vm_id, { deleting: false, state: 'dead', failure_reason: event.data.reason })] : [];
      case 'VmDeleted':
        return [set(vm_id, { deleted_at: event.data.deleted_at })];
      default:
        return [];
    }
  },
});
