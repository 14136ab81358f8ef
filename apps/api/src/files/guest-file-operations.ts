import { Injectable } from '@nestjs/common';
import { AggregateRepository, isSealed, Operations, stepContext, type CommandContext } from '@arbor/application';
import { deterministicUuid, failed, fromFileChunks, GuestFile, toFileChunks, type FileReadRequested, type FileWriteRequested } from '@arbor/domain';

type Target = Omit<FileReadRequested['data'], 'op_id'>;

/**
 * Guest file reads and writes through the log: the API appends the request (and a write's
 * content) to `guestfile-<op_id>`, the vm-worker does it on the host and appends the outcome
 * (and a read's content). File contents thus live in the log, the audit trail of who put what in
 * which VM (sealed with the org's key); MAX_FILE_CONTENT_BYTES keeps that bounded. The op id derives from the command id, so
 * a retry with the same X-Idempotency-Key joins the first attempt instead of writing again. A
 * failure answers as the aggregate's outcome rules say (404 missing file, 413 too large, …).
 */
@Injectable()
export class GuestFileOperations {
  constructor(
    private readonly aggregates: AggregateRepository,
    private readonly operations: Operations,
  ) {}

  async write(context: CommandContext, target: Target, options: Pick<FileWriteRequested['data'], 'mode' | 'create_dirs'>, content: Buffer): Promise<void> {
    const op_id = deterministicUuid(context.command_id, 'guestfile');
    const chunks = toFileChunks(content);
    // One append per chunk keeps each append small (see FILE_CHUNK_BYTES); the request comes last.
    for (const [index, data_b64] of chunks.entries()) {
      await this.aggregates.handle(GuestFile, op_id, { type: 'AddFileChunk', op_id, index, data_b64 }, stepContext(context, `chunk-${index}`));
    }
    const request = { type: 'RequestFileWrite' as const, op_id, ...target, ...options, size: content.length, chunk_count: chunks.length };
    await this.operations.run(GuestFile, op_id, request, stepContext(context, 'request'));
  }

  async read(context: CommandContext, target: Target): Promise<Buffer> {
    const op_id = deterministicUuid(context.command_id, 'guestfile');
    await this.operations.run(GuestFile, op_id, { type: 'RequestFileRead', op_id, ...target }, stepContext(context, 'request'));
    const { chunks } = (await this.aggregates.load(GuestFile, op_id)).state;
    if (chunks.some(isSealed)) throw failed("the file's content can no longer be read: the org's secrets key was deleted");
    return fromFileChunks(chunks);
  }
}
