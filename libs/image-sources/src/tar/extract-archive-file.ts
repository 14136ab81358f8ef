import { stat } from 'node:fs/promises';
import type { SourceProgress } from '../source-progress';
import { openArchive } from './open-archive';
import { extractTar, type ExtractionBudget, type ExtractReport } from './safe-extractor';

/**
 * A root filesystem archive (an upload, an S3 object: tar, tar.gz or tar.zst) unpacked into
 * `rootfs` by the safe extractor; progress in archive bytes read.
 */
export async function extractArchiveFile(file: string, rootfs: string, options: { budget: ExtractionBudget; onProgress?: SourceProgress }): Promise<ExtractReport> {
  const total = (await stat(file)).size;
  const input = await openArchive(file, (read) => options.onProgress?.({ stage: 'extracting', done: read, total, unit: 'bytes' }));
  return extractTar(input, rootfs, { mode: 'rootfs', budget: options.budget });
}
