import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { causedBy, uploadFileOf, uploadTreeOf, type AggregateRepository, type CommandContext, type ImageSettings, type UnpackedUpload } from '@arbor/application';
import { Image, ImageName, type ImageCommand, type ImageStage, type ImageState } from '@arbor/domain';
import type { RecordedEvent } from '@arbor/event-store';
import { ImageInUseError, imageSizeMib, treeSize, type HypervisorDriver } from '@arbor/hypervisor';
import { extractArchiveFile, ExtractionBudget, fetchS3Object, pullImage, RegistryClient, type SourceProgressReport } from '@arbor/image-sources';
import type { Log } from '@arbor/observability';
import { registryGuards } from './registry-guards';
import type { StreamReactor } from './stream-reactor';

/** Image jobs running in this process, by image id (process-wide, as forks are). */
const runningHere = new Map<string, Promise<void>>();

/** An upload no job took this long after it arrived was left by an api that stopped in between: it goes. */
const ABANDONED_UPLOAD_MS = 24 * 3600_000;

/** A stage's finer progress is written to the log at most this often (each new stage at once). */
const PROGRESS_EVERY_MS = 5_000;

export interface ImageBuilderOptions {
  workerId: string;
  dataDir: string;
  settings: ImageSettings;
}

/**
 * The worker's image job (a reactor of `image-<id>` streams): claims a pending job (the first
 * worker's claim wins; an upload's job only where the upload can be read), turns the source into a
 * root filesystem directory with @arbor/image-sources (registry pull, S3 tarball, uploaded
 * tarball), hands it to `driver.buildImage` and records ImageCreated, or ImageCreationFailed with
 * the reason (and frees the name). Stages go into the log as they are reached and into the
 * worker's log lines.
 *
 * The image lives on the host of the worker that built it: VMs of it are placed there
 * (VmReconciler), as VMs of a commit follow its snapshot.
 *
 * Restarts: a job that was running when its worker stopped is found `creating` under this
 * worker's id with nothing running: it is started again from the source (ImageBuildStarted with
 * the next attempt; the driver's buildImage replaces a half-built image; an upload's tree waits in
 * the upload directory until its job ends, unless the driver had moved it), and after
 * ARBOR_IMAGE_BUILD_ATTEMPTS starts it fails saying so. A deleted image's files are removed here
 * once nothing on the host uses them any more (retried on every resync until then).
 */
export class ImageBuilder implements StreamReactor {
  readonly aggregate = Image;
  private readonly slots: BuildSlots;

  constructor(
    private readonly aggregates: AggregateRepository,
    private readonly driver: HypervisorDriver,
    private readonly log: Log,
    private readonly options: ImageBuilderOptions,
  ) {
    this.slots = new BuildSlots(options.settings.parallelBuilds);
  }

  /**
   * As the worker starts: uploads no job ever took (the api stopped between receiving one and
   * asking for its image) are removed once a day old, and so are uploads the api was still
   * receiving when it stopped (`.part`, `.part-<random>`), which no job ever reads.
   */
  async discover(): Promise<string[]> {
    const dir = this.options.settings.uploadDir;
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      const [, id, kind, partial] = /^([0-9a-f-]{36})\.(tar|upload)(\.part(?:-\w+)?)?$/.exec(name) ?? [];
      if (!id) continue;
      const age = Date.now() - (await stat(join(dir, name)).then((stats) => stats.mtimeMs, () => Date.now()));
      if (age <= ABANDONED_UPLOAD_MS) continue;
      if ((kind === 'upload' && partial) || (await this.aggregates.load(Image, id)).state.status === 'none') {
        this.log.info(`worker: removing the upload ${name}, which no image job took`);
        await rm(join(dir, name), { recursive: true, force: true });
      }
    }
    return [];
  }

  async react(image_id: string): Promise<boolean> {
    if (runningHere.has(image_id)) return true;
    const { state, recorded } = await this.aggregates.load(Image, image_id);
    const request = recorded[0];
    switch (state.status) {
      case 'none':
        return false;
      case 'completed':
      case 'failed':
        await this.cleanUp(image_id, state);
        return false;
      case 'deleted':
        return this.removeImage(image_id, state);
      case 'pending':
        if (!this.canBuild(state)) return false;
        return this.start(image_id, request, 1);
      case 'creating':
        if (state.worker_id !== this.options.workerId) return false;
        // Claimed here, and nothing runs it: this worker stopped while it ran.
        if (state.attempt >= this.options.settings.buildAttempts) {
          await this.fail(image_id, state, request, `the build was interrupted ${state.attempt} time(s) (worker restarts) and was not started again`);
          return false;
        }
        this.log.warn(`worker: image ${image_id} (${state.image_name}) was being built when this worker stopped; building it again (attempt ${state.attempt + 1})`);
        return this.start(image_id, request, state.attempt + 1);
    }
  }

  /** An upload's job needs the upload, which only workers sharing the api's upload directory see. */
  private canBuild(state: ImageState): boolean {
    if (state.source?.type !== 'upload') return true;
    const { uploadDir } = this.options.settings;
    return existsSync(uploadTreeOf(uploadDir, state.source.upload_id)) || existsSync(uploadFileOf(uploadDir, state.source.upload_id));
  }

  private async start(image_id: string, request: RecordedEvent, attempt: number): Promise<boolean> {
    const claim: ImageCommand = { type: 'StartImageBuild', worker_id: this.options.workerId, attempt, now: new Date().toISOString() };
    const { events } = await this.aggregates.handle(Image, image_id, claim, this.context(request, `claim-${attempt}`));
    if (events.length === 0) return false; // another worker took it
    const run = this.slots
      .run(() => this.build(image_id, request, attempt))
      .catch((error) => this.log.warn(`worker: image ${image_id}: the job stopped (${(error as Error).message}); the next resync looks at it again`))
      .finally(() => runningHere.delete(image_id));
    runningHere.set(image_id, run);
    return true;
  }

  private async build(image_id: string, request: RecordedEvent, attempt: number): Promise<void> {
    const { state } = await this.aggregates.load(Image, image_id);
    const { settings } = this.options;
    const work = this.workDir(image_id);
    let rootfs = join(work, 'rootfs');
    const progress = new ProgressRecorder(this, image_id, request, attempt, `${state.image_name} (${image_id})`);
    await rm(work, { recursive: true, force: true });
    await mkdir(rootfs, { recursive: true, mode: 0o700 });
    try {
      const budget = new ExtractionBudget(settings.rootfsMaxBytes, settings.rootfsMaxEntries);
      const source = state.source!;
      this.log.info(`worker: building image ${state.image_name} (${image_id}) from ${describeSource(source)}, attempt ${attempt}`);
      const onProgress = (report: SourceProgressReport) => progress.source(report);
      switch (source.type) {
        case 'upload': {
          const tree = uploadTreeOf(settings.uploadDir, source.upload_id);
          if (!existsSync(tree)) {
            // Asked for by an earlier version, which kept the tarball: unpacked here.
            await progress.stage('extracting', null);
            await extractArchiveFile(uploadFileOf(settings.uploadDir, source.upload_id), rootfs, { budget, onProgress });
            break;
          }
          // Unpacked by the api as it arrived: built from where it is (the driver may move it).
          const unpacked = JSON.parse(await readFile(join(tree, 'unpacked.json'), 'utf8')) as UnpackedUpload;
          await progress.stage('extracting', 'error' in unpacked ? null : `unpacked as it was received: ${unpacked.entries} entries, ${mib(unpacked.bytes)} MiB`);
          if ('error' in unpacked) throw new Error(unpacked.error);
          rootfs = join(tree, 'rootfs');
          // The sandbox driver moves the tree into its image store: an interrupted build may have taken it.
          if (!existsSync(rootfs)) throw new Error('the uploaded root filesystem is gone: the interrupted build had handed it to the hypervisor driver; upload it again');
          budget.entries = unpacked.entries;
          budget.bytes = unpacked.bytes;
          break;
        }
        case 's3': {
          await progress.stage('downloading', null);
          const archive = join(work, 'archive');
          await fetchS3Object(settings.s3, source.bucket, source.key, archive, {
            maxBytes: settings.archiveMaxBytes,
            onBytes: (done, total) => progress.source({ stage: 'downloading', done, total, unit: 'bytes' }),
          });
          await progress.stage('extracting', null);
          await extractArchiveFile(archive, rootfs, { budget, onProgress });
          await rm(archive, { force: true });
          break;
        }
        case 'docker': {
          await progress.stage('downloading', null);
          const client = new RegistryClient({ insecureRegistries: settings.insecureRegistries, ...registryGuards(settings.privateRegistries) });
          const pulled = await pullImage(source.image_ref, rootfs, { client, scratchDir: join(work, 'layers'), maxDownloadBytes: settings.archiveMaxBytes, budget, onProgress }).finally(() => client.close());
          this.log.info(`worker: image ${image_id}: pulled ${source.image_ref}@${pulled.manifest_digest} (${pulled.layers} layers, ${mib(pulled.downloaded_bytes)} MiB)`);
          break;
        }
      }
      const rootfsMib = Math.ceil(budget.bytes / (1024 * 1024));
      // images/create: free space on top of the root filesystem; an upload: the disk's whole size,
      // at least what the drivers give the root filesystem (imageSizeMib: what it takes on disk and room).
      const extra_size_mib = state.size_rule === 'extra' ? state.size_mib : Math.max(0, state.size_mib - imageSizeMib((await treeSize(rootfs)).bytes, 0));
      await progress.stage('configuring', `${budget.entries} entries, ${rootfsMib} MiB`);
      const info = await this.driver.buildImage({ image_id, rootfs_dir: rootfs, extra_size_mib }, (stage, detail) => void progress.stage(stage, detail ?? null));
      await progress.flush();
      await this.record(image_id, request, { type: 'RecordImageCreated', worker_id: this.options.workerId, size_mib: info.size_mib, now: new Date().toISOString() }, 'created');
      this.log.info(`worker: image ${state.image_name} (${image_id}) built: ${info.size_mib} MiB disk`);
    } catch (error) {
      await progress.flush();
      const reason = (error as Error).message;
      this.log.warn(`worker: image ${state.image_name} (${image_id}) failed at ${progress.current}: ${reason}`);
      await this.driver.deleteImage(image_id).catch(() => {});
      await this.fail(image_id, state, request, reason);
    } finally {
      await rm(work, { recursive: true, force: true });
    }
    await this.cleanUp(image_id, (await this.aggregates.load(Image, image_id)).state);
  }

  /** Ends the job with the reason, and frees its name. */
  private async fail(image_id: string, state: ImageState, request: RecordedEvent, reason: string): Promise<void> {
    await this.record(image_id, request, { type: 'FailImageCreation', reason: reason.slice(0, 2000), now: new Date().toISOString() }, 'failed');
    await this.aggregates.handle(
      ImageName,
      { org_id: state.org_id!, image_name: state.image_name! },
      { type: 'ReleaseImageName', image_id, now: new Date().toISOString() },
      this.context(request, 'release-name'),
    );
  }

  /** A job that ended leaves nothing behind: its work directory and its upload go. */
  private async cleanUp(image_id: string, state: ImageState): Promise<void> {
    if (state.worker_id === this.options.workerId || state.worker_id === null) await rm(this.workDir(image_id), { recursive: true, force: true });
    if (state.source?.type === 'upload' && (state.status === 'completed' || state.status === 'failed' || state.status === 'deleted')) {
      const { uploadDir } = this.options.settings;
      await rm(uploadTreeOf(uploadDir, state.source.upload_id), { recursive: true, force: true });
      await rm(uploadFileOf(uploadDir, state.source.upload_id), { force: true });
    }
  }

  /** A deleted image's files, on its host, once no machine or snapshot there uses them (true: try again later). */
  private async removeImage(image_id: string, state: ImageState): Promise<boolean> {
    await this.cleanUp(image_id, state);
    if (state.worker_id !== this.options.workerId) return false;
    try {
      await this.driver.deleteImage(image_id);
      this.log.info(`worker: image ${state.image_name} (${image_id}) deleted from this host`);
      return false;
    } catch (error) {
      if (error instanceof ImageInUseError) return true;
      throw error;
    }
  }

  private workDir(image_id: string): string {
    return join(this.options.dataDir, 'images', 'work', image_id);
  }

  /** Appends the job's outcome or progress, caused by its request. */
  async record(image_id: string, request: RecordedEvent, command: ImageCommand, step: string): Promise<void> {
    await this.aggregates.handle(Image, image_id, command, this.context(request, step));
  }

  /**
   * Caused by the job's request; the command id names this worker and the step, so a retry after a
   * crash appends nothing new while two workers' claims stay two commands (one wins on the stream).
   */
  private context(request: RecordedEvent, step: string): CommandContext {
    return { ...causedBy(request, 'image', this.options.workerId, step), actor_key_id: request.metadata.actor_key_id };
  }

  logProgress(line: string): void {
    this.log.info(line);
  }
}

/**
 * The job's stages as events (each new stage at once) and its finer progress (bytes, layers) at
 * most every few seconds, in the log and in the worker's lines.
 */
class ProgressRecorder {
  current: ImageStage = 'pending';
  private sequence = 0;
  private lastWritten = 0;
  private pending: { stage: ImageStage; detail: string | null } | null = null;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly builder: ImageBuilder,
    private readonly image_id: string,
    private readonly request: RecordedEvent,
    private readonly attempt: number,
    private readonly label: string,
  ) {}

  /** A new stage: recorded at once. */
  stage(stage: ImageStage, detail: string | null): Promise<void> {
    this.current = stage;
    this.pending = null;
    return this.write(stage, detail);
  }

  /** How far the source has come: recorded if a while has passed since the last record. */
  source(report: SourceProgressReport): void {
    const detail = report.unit === 'bytes' ? `${mib(report.done)} of ${report.total === null ? '?' : mib(report.total)} MiB` : `layer ${report.done + 1} of ${report.total}`;
    if (report.stage !== this.current) {
      void this.stage(report.stage, detail);
      return;
    }
    this.pending = { stage: report.stage, detail };
    if (Date.now() - this.lastWritten >= PROGRESS_EVERY_MS) {
      this.pending = null;
      void this.write(report.stage, detail);
    }
  }

  async flush(): Promise<void> {
    await this.writing;
  }

  private write(stage: ImageStage, detail: string | null): Promise<void> {
    this.lastWritten = Date.now();
    const step = `progress-${this.attempt}-${++this.sequence}`;
    this.builder.logProgress(`worker: image ${this.label}: ${stage}${detail ? ` (${detail})` : ''}`);
    this.writing = this.writing
      .then(() => this.builder.record(this.image_id, this.request, { type: 'RecordImageProgress', stage, detail, now: new Date().toISOString() }, step))
      .catch(() => {});
    return this.writing;
  }
}

/** At most `size` builds at once in this process; the rest wait in order. */
class BuildSlots {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly size: number) {}

  async run<T>(job: () => Promise<T>): Promise<T> {
    if (this.running >= this.size) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running++;
    try {
      return await job();
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }
}

function describeSource(source: NonNullable<ImageState['source']>): string {
  switch (source.type) {
    case 'docker':
      return `the registry image ${source.image_ref}`;
    case 's3':
      return `s3://${source.bucket}/${source.key}`;
    case 'upload':
      return `an uploaded tarball of ${mib(source.bytes)} MiB`;
  }
}

const mib = (bytes: number) => Math.round((bytes / (1024 * 1024)) * 10) / 10;
