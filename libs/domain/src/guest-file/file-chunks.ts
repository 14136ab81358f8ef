/**
 * Largest file content (decoded) a guest file operation moves. Contents travel through the log
 * (the audit trail of what went into which VM), so this keeps the log bounded; the API answers
 * 413 beyond it.
 */
export const MAX_FILE_CONTENT_BYTES = 8 * 1024 * 1024;

/**
 * File contents are split into events of at most this many bytes (about 700 KB once base64'd),
 * each appended on its own: EventStoreDB refuses an append over 1 MiB by default
 * (MaxAppendSize), so one event per file would break the distributed mode for files over ~750 KiB.
 */
export const FILE_CHUNK_BYTES = 512 * 1024;

/** The content as base64 chunks of FILE_CHUNK_BYTES (an empty file has none). */
export function toFileChunks(content: Buffer): string[] {
  const chunks: string[] = [];
  for (let start = 0; start < content.length; start += FILE_CHUNK_BYTES) {
    chunks.push(content.subarray(start, start + FILE_CHUNK_BYTES).toString('base64'));
  }
  return chunks;
}

export function fromFileChunks(chunks: readonly string[]): Buffer {
  return Buffer.concat(chunks.map((chunk) => Buffer.from(chunk, 'base64')));
}
