/** Collection `vm_exec_logs`: one document per exec output batch, kept by the projector, served by GET /vm/{id}/logs. */
export const VM_EXEC_LOGS_COLLECTION = 'vm_exec_logs';

export interface ExecLogEntryDocument {
  /** The output event's global log position, as a string. */
  _id: string;
  /** The same position as a number: the entry's opaque, monotonically increasing offset. */
  offset: number;
  vm_id: string;
  org_id: string;
  exec_id: string;
  stream: 'stdout' | 'stderr';
  data_b64: string;
  timestamp: string;
  [field: string]: unknown;
}
