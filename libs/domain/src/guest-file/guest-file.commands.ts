import type { DomainCommand } from '../shared/decider';
import type { FileOperationFailureKind, FileReadRequested, FileWriteRequested } from './guest-file.events';

/** Content travels ahead of a write, and after a read's request (see FILE_CHUNK_BYTES). */
export type AddFileChunk = DomainCommand<'AddFileChunk', { op_id: string; index: number; data_b64: string }>;
export type RequestFileWrite = DomainCommand<'RequestFileWrite', FileWriteRequested['data']>;
export type RequestFileRead = DomainCommand<'RequestFileRead', FileReadRequested['data']>;
export type RecordFileWritten = DomainCommand<'RecordFileWritten'>;
export type RecordFileRead = DomainCommand<'RecordFileRead', { size: number; chunk_count: number }>;
export type RecordFileOperationFailed = DomainCommand<'RecordFileOperationFailed', { kind: FileOperationFailureKind; reason: string }>;

export type GuestFileCommand = AddFileChunk | RequestFileWrite | RequestFileRead | RecordFileWritten | RecordFileRead | RecordFileOperationFailed;
