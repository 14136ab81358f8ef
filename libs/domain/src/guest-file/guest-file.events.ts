import { eventTypes, type DomainEvent } from '../shared/decider';

/**
 * Stream `guestfile-<op_id>`: one read or write of a file inside a VM. The API appends the intent,
 * the vm-worker does the work on the hypervisor and appends the outcome, so the API never talks
 * to the host. File contents travel as `FileContentChunk` events (see FILE_CHUNK_BYTES): before
 * the FileWriteRequested they belong to, after the FileReadRequested they answer.
 */
export type FileContentChunk = DomainEvent<
  'FileContentChunk',
  {
    op_id: string;
    index: number;
    /**
     * The chunk's bytes, base64. Sealed in the log with the org's key (the bytes, not their base64).
     * @sealed "bytes"
     */
    data_b64: string;
  }
>;
export type FileWriteRequested = DomainEvent<
  'FileWriteRequested',
  {
    op_id: string;
    vm_id: string;
    org_id: string;
    path: string;
    /** Permission bits, e.g. 420 (0o644). */
    mode: number;
    create_dirs: boolean;
    /** The content is the chunks before this event, in index order. */
    size: number;
    chunk_count: number;
  }
>;
export type FileReadRequested = DomainEvent<'FileReadRequested', { op_id: string; vm_id: string; org_id: string; path: string }>;
export type FileWritten = DomainEvent<'FileWritten', { op_id: string }>;
/** The content is the chunks between FileReadRequested and this event, in index order. */
export type FileRead = DomainEvent<'FileRead', { op_id: string; size: number; chunk_count: number }>;
export type FileOperationFailureKind = 'not_found' | 'not_a_file' | 'parent_missing' | 'vm_unavailable' | 'too_large' | 'other';
export type FileOperationFailed = DomainEvent<'FileOperationFailed', { op_id: string; reason: string; kind: FileOperationFailureKind }>;

export type GuestFileEvent = FileContentChunk | FileWriteRequested | FileReadRequested | FileWritten | FileRead | FileOperationFailed;
export const GUEST_FILE_EVENT_TYPES = eventTypes<GuestFileEvent>()('FileContentChunk', 'FileWriteRequested', 'FileReadRequested', 'FileWritten', 'FileRead', 'FileOperationFailed');
