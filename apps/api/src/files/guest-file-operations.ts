import { Inject, Injectable } from '@nestjs/common';
import { deterministicUuid, streams, fromFileChunks, guestFileDecider, isGuestFileOutcome, toFileChunks, type FileReadRequested, type FileWriteRequested, type GuestFileCommand, type GuestFileEvent, type GuestFileState } from '@arbor/domain';
import { handleCommand, loadAggregate, type ArborConfig, awaitStreamEvent, type CommandContext, ARBOR_CONFIG } from '@arbor/application';
import { EVENT_STORE, type EventStore } from '@arbor/event-store';
import { HttpError } from '../http/http-error';

type Target = Omit<FileReadRequested['data'], 'op_id'>;

/**
 * Guest file reads and writes through the log: the API appends the request (and a write's
 * content) to `guestfile-<op_id>`, the vm-worker does it on the host and appends the outcome
 * (and a read's content). File contents thus live in the log, the audit trail of who put what in
 * which VM; MAX_FILE_CONTENT_BYTES keeps that bounded. The op id derives from the command id, so
 * a retry with the same X-Idempotency-Key joins the first attempt instead of writing again.
 */
@Injectable()
export class GuestFileOperations {
  constructor(
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Inject(ARBOR_CONFIG) private readonly config: ArborConfig,
  ) {}

  async write(context: CommandContext, target: Target, options: Pick<FileWriteRequested['data'], 'mode' | 'create_dirs'>, content: Buffer): Promise<void> {
    const op_id = deterministicUuid(context.command_id, 'guestfile');
    const chunks = toFileChunks(content);
    // One append per chunk keeps each append small (see FILE_CHUNK_BYTES); the request comes last.
    for (const [index, data_b64] of chunks.entries()) {
      await this.submit(op_id, { type: 'AddFileChunk', op_id, index, data_b64 }, context, `chunk-${index}`);
    }
    await this.submit(op_id, { type: 'RequestFileWrite', op_id, ...target, ...options, size: content.length, chunk_count: chunks.length }, context, 'request');
    await this.outcome(op_id, target.path);
  }

  async read(context: CommandContext, target: Target): Promise<Buffer> {
    const op_id = deterministicUuid(context.command_id, 'guestfile');
    await this.submit(op_id, { type: 'RequestFileRead', op_id, ...target }, context, 'request');
    return fromFileChunks((await this.outcome(op_id, target.path)).chunks);
  }

  private submit(op_id: string, command: GuestFileCommand, context: CommandContext, part: string) {
    return handleCommand(this.events, streams.guestFile(op_id), guestFileDecider, command, { ...context, command_id: deterministicUuid(context.command_id, part) });
  }

  /** Waits for the worker's outcome; a failure becomes the status its kind calls for. */
  private async outcome(op_id: string, path: string): Promise<GuestFileState> {
    const stream = streams.guestFile(op_id);
    await awaitStreamEvent(this.events, stream, -1, (event) => isGuestFileOutcome(event.type), `the worker to finish file operation ${op_id}`, this.config.waitTimeoutMs);
    const { state } = await loadAggregate<GuestFileState, GuestFileEvent>(this.events, stream, guestFileDecider);
    if (state.outcome?.type !== 'failed') return state;
    const { kind, reason } = state.outcome;
    switch (kind) {
      case 'not_found':
        throw new HttpError(404, 'file not found');
      case 'not_a_file':
        throw new HttpError(400, `${path} is not a regular file`);
      case 'parent_missing':
        throw new HttpError(404, `the parent directory of ${path} does not exist (set create_dirs to create it)`);
      case 'too_large':
        throw new HttpError(413, reason);
      case 'vm_unavailable':
        throw new HttpError(409, `vm cannot run file operations now: ${reason}`);
      default:
        throw new HttpError(500, reason);
    }
  }
}
