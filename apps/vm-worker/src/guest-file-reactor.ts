import { causedBy, isSealed, type AggregateRepository } from '@arbor/application';
import {
  fromFileChunks,
  GuestFile,
  MAX_FILE_CONTENT_BYTES,
  toFileChunks,
  type FileOperationFailureKind,
  type FileReadRequested,
  type FileWriteRequested,
  type GuestFileCommand,
} from '@arbor/domain';
import type { RecordedEvent } from '@arbor/event-store';
import { GuestFileError, MachineNotFoundError, MachineStateError, type HypervisorDriver } from '@arbor/hypervisor';
import { type Log, silentLog } from '@arbor/observability';
import type { StreamReactor } from './stream-reactor';
import type { VmPlacements } from './vm-placements';

const REQUEST_TYPES = new Set(['FileWriteRequested', 'FileReadRequested']);

/**
 * Carries out guest file reads and writes asked for in `guestfile-<op_id>` streams: the API
 * never talks to the host, so the content goes through the log both ways. A pending request
 * gets one driver call and one outcome; a finished one is left alone, so a replay does nothing.
 */
export class GuestFileReactor implements StreamReactor {
  readonly aggregate = GuestFile;

  constructor(
    private readonly aggregates: AggregateRepository,
    private readonly driver: HypervisorDriver,
    private readonly placements: VmPlacements,
    private readonly log: Log = silentLog,
  ) {}

  /** Never needs a resync: a request is answered (or failed) by the reaction it triggers. */
  async react(op_id: string): Promise<boolean> {
    const { state, recorded } = await this.aggregates.load(GuestFile, op_id);
    const intent = recorded.find((event) => REQUEST_TYPES.has(event.type));
    if (state.phase !== 'pending' || !intent) return false;
    // The VM's own host answers (the API only asks of a running VM, which is placed by then).
    if (await this.placements.elsewhere((intent.data as { vm_id: string }).vm_id)) return false;
    try {
      const outcome = intent.type === 'FileWriteRequested' ? await this.write(intent, state.chunks) : await this.read(op_id, intent);
      await this.record(op_id, intent, outcome);
    } catch (error) {
      const reason = (error as Error).message;
      this.log.warn(`worker: guest file operation ${op_id} failed: ${reason}`);
      await this.record(op_id, intent, { type: 'RecordFileOperationFailed', kind: failureKind(error), reason });
    }
    return false;
  }

  private async write(intent: RecordedEvent, chunks: string[]): Promise<GuestFileCommand> {
    const { vm_id, path, mode, create_dirs } = intent.data as FileWriteRequested['data'];
    if (chunks.some(isSealed)) return { type: 'RecordFileOperationFailed', kind: 'other', reason: "the file's content can no longer be read: the org's secrets key was deleted" };
    await this.driver.writeFile(vm_id, path, fromFileChunks(chunks), { mode, create_dirs });
    return { type: 'RecordFileWritten' };
  }

  private async read(op_id: string, intent: RecordedEvent): Promise<GuestFileCommand> {
    const { vm_id, path } = intent.data as FileReadRequested['data'];
    const content = await this.driver.readFile(vm_id, path, { max_bytes: MAX_FILE_CONTENT_BYTES });
    if (content.length > MAX_FILE_CONTENT_BYTES) {
      // Refused before any of it reaches the log: contents live there, and the cap bounds it.
      const reason = `${path} is ${content.length} bytes, over the limit of ${MAX_FILE_CONTENT_BYTES} bytes (8 MiB)`;
      return { type: 'RecordFileOperationFailed', kind: 'too_large', reason };
    }
    const chunks = toFileChunks(content);
    // One append per chunk keeps every append small (see FILE_CHUNK_BYTES).
    for (const [index, data_b64] of chunks.entries()) {
      await this.record(op_id, intent, { type: 'AddFileChunk', op_id, index, data_b64 }, String(index));
    }
    return { type: 'RecordFileRead', size: content.length, chunk_count: chunks.length };
  }

  /** Appends an outcome, caused by the request it answers and correlated with its API call. */
  private async record(op_id: string, intent: RecordedEvent, command: GuestFileCommand, part = ''): Promise<void> {
    await this.aggregates.handle(GuestFile, op_id, command, causedBy(intent, command.type, part));
  }
}

function failureKind(error: unknown): FileOperationFailureKind {
  if (error instanceof GuestFileError) return error.reason;
  // A paused or vanished machine; on this single-host worker the machine is ours or gone.
  if (error instanceof MachineStateError || error instanceof MachineNotFoundError) return 'vm_unavailable';
  return 'other'; // e.g. a driver error, or a file that changed while a replayed read ran
}
