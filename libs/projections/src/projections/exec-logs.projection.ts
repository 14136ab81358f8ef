import { Exec } from '@arbor/domain';
import { type WriteOp, VM_EXEC_LOGS_COLLECTION, type ExecLogEntryDocument } from '@arbor/read-models';
import { projectionOf } from './projection';

/**
 * The `vm_exec_logs` read model: every exec output of a VM, in log order. The entry's offset is
 * the output event's global position, so offsets only grow and a page resumes exactly where the
 * previous one stopped.
 */
export const execLogsProjection = projectionOf(Exec, {
  name: 'vm_exec_logs',
  collections: [VM_EXEC_LOGS_COLLECTION],
  indexes: [{ collection: VM_EXEC_LOGS_COLLECTION, keys: { vm_id: 1, offset: 1 } }],
  project(event, recorded): WriteOp[] {
    if (event.type !== 'ExecOutput') return [];
    const { exec_id, vm_id, stream, data_b64, at } = event.data;
    const doc: ExecLogEntryDocument = {
      _id: String(recorded.position),
      offset: recorded.position,
      vm_id,
      org_id: recorded.metadata.org_id ?? '',
      exec_id,
      stream,
      data_b64,
      timestamp: at,
    };
    // replaceOne with upsert: applying the same event again (a rebuild) leaves one entry.
    return [{ op: 'replaceOne', collection: VM_EXEC_LOGS_COLLECTION, filter: { _id: doc._id }, doc, upsert: true }];
  },
});
