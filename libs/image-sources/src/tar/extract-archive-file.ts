import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { SourceProgress } from '../source-progress';
import { extractInThread } from './extraction-thread';
import type { ExtractionBudget, ExtractReport } from './safe-extractor';

/**
 * An archive file (an upload, an S3 object, an image layer: tar, tar.gz or tar.zst) unpacked into
 * `rootfs` by the safe extractor, on the extraction thread (see extractInThread): its synchronous
 * file system calls hold neither the caller's event loop (the worker's, which drives machines
 * meanwhile) nor its heap's garbage collector (a full collection of the worker's heap ran every
 * few dozen milliseconds as the chunks went through, four tenths of a pull). `budget` is shared
 * with the archives before it (an image's lower layers): what they used counts, and what this one
 * adds is added. `mode` as for extractTar (`layer` applies whiteouts). Progress in archive bytes read.
 */
export async function extractArchiveFile(
  file: string,
  rootfs: string,
  options: { budget: ExtractionBudget; mode?: 'rootfs' | 'layer'; onProgress?: SourceProgress },
): Promise<ExtractReport> {
  const { budget, onProgress } = options;
  const total = (await stat(file)).size;
  const input = createReadStream(file, { highWaterMark: 1 << 20 });
  if (onProgress) {
    let read = 0;
    input.on('data', (chunk) => onProgress({ stage: 'extracting', done: (read += chunk.length), total, unit: 'bytes' }));
  }
  try {
    const report = await extractInThread(input, rootfs, {
      mode: options.mode ?? 'rootfs',
      maxBytes: budget.maxBytes,
      maxEntries: budget.maxEntries,
      used: { bytes: budget.bytes, entries: budget.entries },
    });
    // The report's bytes are the budget's whole count (see SafeExtractor.finish); its entries this archive's.
    budget.bytes = report.bytes;
    budget.entries += report.entries;
    return report;
  } finally {
    input.destroy();
  }
}
