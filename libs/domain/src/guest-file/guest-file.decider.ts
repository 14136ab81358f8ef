import type { Decider } from '../shared/decider';
import { conflict, invalid, notFound } from '../shared/domain-error';
import { MAX_FILE_CONTENT_BYTES } from './file-chunks';
import type { GuestFileCommand } from './guest-file.commands';
import type { FileOperationFailureKind, FileReadRequested, FileWriteRequested, GuestFileEvent } from './guest-file.events';

export type GuestFileOutcome = { type: 'written' } | { type: 'read'; size: number } | { type: 'failed'; kind: FileOperationFailureKind; reason: string };

export interface GuestFileState {
  /** none: nothing asked yet (a write's content may be arriving); pending: the worker's turn. */
  phase: 'none' | 'pending' | 'done';
  operation: 'read' | 'write' | null;
  request: FileWriteRequested['data'] | FileReadRequested['data'] | null;
  /** The content so far, base64 per chunk, in index order. */
  chunks: string[];
  outcome: GuestFileOutcome | null;
}

const initialState = (): GuestFileState => ({ phase: 'none', operation: null, request: null, chunks: [], outcome: null });

const decodedSize = (chunks: readonly string[]) => chunks.reduce((total, chunk) => total + Buffer.byteLength(chunk, 'base64'), 0);

function decide(command: GuestFileCommand, state: GuestFileState): GuestFileEvent[] {
  switch (command.type) {
    case 'AddFileChunk': {
      const { op_id, index, data_b64 } = command;
      if (index < state.chunks.length) {
        // A retried upload (or a re-read after a worker crash) repeats chunks already recorded.
        if (state.chunks[index] === data_b64) return [];
        throw conflict(`file content changed during the operation (chunk ${index} differs)`);
      }
      const accepting = state.phase === 'none' || (state.phase === 'pending' && state.operation === 'read');
      if (!accepting) throw conflict('the file operation no longer accepts content');
      if (index > state.chunks.length) throw invalid(`file chunk ${index} arrived before chunk ${state.chunks.length}`);
      return [{ type: 'FileContentChunk', data: { op_id, index, data_b64 } }];
    }
    case 'RequestFileWrite': {
      const { type: _, ...data } = command;
      if (state.operation === 'write') return []; // a retry of the same request
      if (state.phase !== 'none') throw conflict('file operation id already used');
      if (data.size > MAX_FILE_CONTENT_BYTES) throw invalid(`file content is larger than ${MAX_FILE_CONTENT_BYTES} bytes`);
      if (state.chunks.length !== data.chunk_count || decodedSize(state.chunks) !== data.size) {
        throw invalid(`file content incomplete: ${state.chunks.length} of ${data.chunk_count} chunks`);
      }
      return [{ type: 'FileWriteRequested', data }];
    }
    case 'RequestFileRead': {
      const { type: _, ...data } = command;
      if (state.operation === 'read') return [];
      if (state.phase !== 'none' || state.chunks.length) throw conflict('file operation id already used');
      return [{ type: 'FileReadRequested', data }];
    }
    case 'RecordFileWritten':
    case 'RecordFileRead':
    case 'RecordFileOperationFailed': {
      // The worker may report twice after a crash: the first report stands.
      if (state.phase === 'done') return [];
      if (state.phase === 'none') throw notFound('file operation');
      const op_id = state.request!.op_id;
      if (command.type === 'RecordFileOperationFailed') {
        return [{ type: 'FileOperationFailed', data: { op_id, kind: command.kind, reason: command.reason } }];
      }
      const expected = command.type === 'RecordFileWritten' ? 'write' : 'read';
      if (state.operation !== expected) throw invalid(`file operation ${op_id} is a ${state.operation}, not a ${expected}`);
      if (command.type === 'RecordFileWritten') return [{ type: 'FileWritten', data: { op_id } }];
      if (state.chunks.length !== command.chunk_count || decodedSize(state.chunks) !== command.size) {
        throw invalid(`file content incomplete: ${state.chunks.length} of ${command.chunk_count} chunks`);
      }
      return [{ type: 'FileRead', data: { op_id, size: command.size, chunk_count: command.chunk_count } }];
    }
  }
}

function evolve(state: GuestFileState, event: GuestFileEvent): GuestFileState {
  switch (event.type) {
    case 'FileContentChunk':
      return { ...state, chunks: [...state.chunks, event.data.data_b64] };
    case 'FileWriteRequested':
      return { ...state, phase: 'pending', operation: 'write', request: event.data };
    case 'FileReadRequested':
      return { ...state, phase: 'pending', operation: 'read', request: event.data };
    case 'FileWritten':
      return { ...state, phase: 'done', outcome: { type: 'written' } };
    case 'FileRead':
      return { ...state, phase: 'done', outcome: { type: 'read', size: event.data.size } };
    case 'FileOperationFailed':
      return { ...state, phase: 'done', outcome: { type: 'failed', kind: event.data.kind, reason: event.data.reason } };
  }
}

export const guestFileDecider: Decider<GuestFileCommand, GuestFileState, GuestFileEvent> = { initialState, decide, evolve };
