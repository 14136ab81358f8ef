import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ArchiveTooLargeError } from '../tar/unsafe-archive-error';
import { extractArchiveFile } from '../tar/extract-archive-file';
import type { ExtractionBudget, ExtractReport } from '../tar/safe-extractor';
import type { SourceProgress } from '../source-progress';
import { formatImageReference, parseImageReference } from './image-reference';
import type { RegistryClient } from './registry-client';

export interface PullOptions {
  client: RegistryClient;
  /** A directory of the caller's for the layers while they are downloaded (emptied afterwards). */
  scratchDir: string;
  /** The most the image's layers may take, compressed, together. */
  maxDownloadBytes: number;
  budget: ExtractionBudget;
  onProgress?: SourceProgress;
  /** How many layers download at once (they are applied in order as each arrives). */
  parallelDownloads?: number;
}

export interface PullReport extends ExtractReport {
  /** The linux/amd64 manifest pulled: `image_ref@<digest>` pins exactly this image. */
  manifest_digest: string;
  layers: number;
  downloaded_bytes: number;
}

/**
 * Pulls an image from its registry into `rootfs`: resolves its linux/amd64 manifest, downloads the
 * layers (a few at a time, each checked against its digest before anything of it is unpacked) and
 * applies them bottom first with the safe extractor, whiteouts and opaque directories included.
 */
export async function pullImage(imageRef: string, rootfs: string, options: PullOptions): Promise<PullReport> {
  const ref = parseImageReference(imageRef);
  const manifest = await options.client.resolveManifest(ref);
  const total = manifest.layers.reduce((sum, layer) => sum + layer.size, 0);
  if (total > options.maxDownloadBytes) {
    throw new ArchiveTooLargeError(`${formatImageReference(ref)} is ${mib(total)} MiB compressed, more than the limit of ${mib(options.maxDownloadBytes)} MiB`);
  }
  await mkdir(options.scratchDir, { recursive: true, mode: 0o700 });
  const downloaded = new Array<number>(manifest.layers.length).fill(0);
  const report = () => downloaded.reduce((sum, bytes) => sum + bytes, 0);
  const files = manifest.layers.map((layer, index) => join(options.scratchDir, `layer-${index}-${layer.digest.replace(':', '-')}`));
  // A failed layer stops the downloads still running.
  const abort = new AbortController();
  const downloads = startDownloads(manifest.layers.length, options.parallelDownloads ?? 3, (index) =>
    options.client.downloadBlob(ref, manifest.layers[index], files[index], {
      maxBytes: options.maxDownloadBytes,
      signal: abort.signal,
      onBytes: (bytes) => {
        downloaded[index] = bytes;
        options.onProgress?.({ stage: 'downloading', done: report(), total, unit: 'bytes' });
      },
    }),
  );
  let last: ExtractReport = { entries: 0, bytes: 0, skipped_devices: 0, skipped_xattrs: 0 };
  const skipped = { devices: 0, xattrs: 0 };
  try {
    options.onProgress?.({ stage: 'downloading', done: 0, total, unit: 'bytes' });
    for (let index = 0; index < manifest.layers.length; index++) {
      await downloads[index]();
      options.onProgress?.({ stage: 'extracting', done: index, total: manifest.layers.length, unit: 'layers' });
      last = await extractArchiveFile(files[index], rootfs, { mode: 'layer', budget: options.budget });
      skipped.devices += last.skipped_devices;
      skipped.xattrs += last.skipped_xattrs;
      await rm(files[index], { force: true });
    }
  } catch (error) {
    abort.abort();
    throw error;
  } finally {
    await Promise.allSettled(downloads.map((wait) => wait()));
    await rm(options.scratchDir, { recursive: true, force: true });
  }
  return {
    manifest_digest: manifest.digest,
    layers: manifest.layers.length,
    downloaded_bytes: report(),
    entries: options.budget.entries,
    bytes: options.budget.bytes,
    skipped_devices: skipped.devices,
    skipped_xattrs: skipped.xattrs,
  };
}

/** Runs `count` downloads, `parallel` at a time in index order; each index's wait resolves when it is done. */
function startDownloads(count: number, parallel: number, download: (index: number) => Promise<void>): (() => Promise<void>)[] {
  const results: Promise<void>[] = [];
  for (let index = 0; index < count; index++) {
    const slot = index >= parallel ? results[index - parallel].catch(() => {}) : Promise.resolve();
    const result = slot.then(() => download(index));
    result.catch(() => {}); // observed by its wait
    results.push(result);
  }
  return results.map((result) => () => result);
}

const mib = (bytes: number) => Math.round(bytes / 1048576);
