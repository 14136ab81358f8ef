import { Readable } from 'node:stream';
import { parentPort, Worker, workerData } from 'node:worker_threads';
import { openArchiveStream } from './open-archive';
import { extractTar, ExtractionBudget, type ExtractReport } from './safe-extractor';
import { ArchiveTooLargeError, UnsafeArchiveError } from './unsafe-archive-error';

export interface ThreadExtractionOptions {
  mode: 'rootfs' | 'layer';
  /** The extraction's budget (ExtractionBudget's caps). */
  maxBytes: number;
  maxEntries: number;
  /** What the budget holds already (the layers below this one): counted against the caps. */
  used?: { bytes: number; entries: number };
}

/**
 * The archive goes to the thread through a ring of shared memory this large: copied in by the
 * caller's thread, announced a MiB at a time (each message wakes the thread: 64 KiB socket chunks
 * one by one made the extraction a fifth slower), copied out by the thread as the extractor asks.
 * No buffer is allocated per chunk on the caller's side: allocating one per MiB (and transferring
 * it) made the api's garbage collector run a third more.
 */
const RING_BYTES = 8 << 20;
const ANNOUNCE_BYTES = 1 << 20;

/** Threads kept for the next extraction once theirs is done (more at once start, and end after). */
const THREADS_KEPT = 1;

/** Every message names its extraction: a thread that is kept ignores what was still on its way for the one before. */
type Numbered<Message> = Message & { job: number };
type ToThread =
  | { type: 'start'; root: string; options: ThreadExtractionOptions }
  | { type: 'data'; bytes: number }
  | { type: 'end' }
  | { type: 'abort'; message: string };
type FromThread = { type: 'consumed'; bytes: number } | { type: 'done'; report: ExtractReport } | { type: 'failed'; name: string; message: string };

/**
 * The thread's code: this module, loaded in the thread. From the TypeScript sources (the tests run
 * them so) it is compiled as it is loaded, as jest compiles it; built, it is plain JavaScript.
 */
const BOOTSTRAP = `
const { workerData } = require('node:worker_threads');
if (workerData.file.endsWith('.ts')) {
  const { readFileSync } = require('node:fs');
  const { transformSync } = require('node:module').createRequire(workerData.file)('@swc/core');
  const options = { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } };
  require.extensions['.ts'] = (module, filename) => module._compile(transformSync(readFileSync(filename, 'utf8'), { ...options, filename }).code, filename);
}
require(workerData.file).runExtractionThread();
`;

interface ExtractionThread {
  worker: Worker;
  ring: SharedArrayBuffer;
}

/**
 * Threads between extractions. A thread is kept rather than started for each archive: starting one
 * and loading the extractor took about 50 ms, and a new thread runs the extractor's code before it
 * is optimized (a 100 MiB root filesystem: 0.45 s in a new thread, 0.3 s in one that had extracted
 * before). An idle thread does not keep the process alive.
 */
const idleThreads: ExtractionThread[] = [];
let lastJob = 0;

function takeThread(): ExtractionThread {
  const thread = idleThreads.pop() ?? startThread();
  thread.worker.ref();
  return thread;
}

function startThread(): ExtractionThread {
  const ring = new SharedArrayBuffer(RING_BYTES);
  const thread = { worker: new Worker(BOOTSTRAP, { eval: true, workerData: { file: __filename, ring } }), ring };
  // One that ends while idle (it should not) is no longer offered.
  thread.worker.on('exit', () => {
    const index = idleThreads.indexOf(thread);
    if (index >= 0) idleThreads.splice(index, 1);
  });
  return thread;
}

/** A thread whose extraction has answered: kept for the next one, or ended. */
function releaseThread(thread: ExtractionThread): void {
  if (idleThreads.length >= THREADS_KEPT) return void thread.worker.terminate();
  thread.worker.unref();
  idleThreads.push(thread);
}

/**
 * Unpacks an archive arriving as a stream (tar, gzip or zstd, told by its first bytes) into
 * `root` with the safe extractor, on a thread of its own: its file system calls are synchronous
 * (creating a name on a busy disk waits for the journal, a millisecond or more, as for `tar -x`),
 * and there they hold neither the caller's event loop (the api's) nor a round trip through the
 * thread pool per file. The caller's thread only copies the chunks into a ring of shared memory
 * (RING_BYTES: `input` is paused while it is full). Settles with the report or the
 * extraction's error (UnsafeArchiveError, ArchiveTooLargeError, or the input's own error) only
 * once the thread has answered that the extraction stopped (or the thread is ended), so nothing
 * is written into `root` afterwards.
 */
export function extractInThread(input: Readable, root: string, options: ThreadExtractionOptions): Promise<ExtractReport> {
  const thread = takeThread();
  const { worker } = thread;
  const job = ++lastJob;
  return new Promise<ExtractReport>((resolve, reject) => {
    const memory = Buffer.from(thread.ring);
    let outcome: { report: ExtractReport } | { error: Error } | null = null;
    const post = (message: ToThread) => outcome === null && worker.postMessage({ ...message, job } satisfies Numbered<ToThread>);
    /** `answered`: the thread said its extraction stopped, and may take the next; otherwise it is ended first. */
    const settle = (result: { report: ExtractReport } | { error: Error }, answered: boolean) => {
      if (outcome !== null) return;
      outcome = result;
      input.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
      worker.off('message', onMessage).off('error', onThreadError).off('exit', onExit);
      const answer = () => ('report' in result ? resolve(result.report) : reject(result.error));
      if (!answered) return void worker.terminate().then(answer);
      releaseThread(thread);
      answer();
    };
    /** Bytes in the ring the thread has not taken yet; where the next go; how many are not announced. */
    let inRing = 0;
    let at = 0;
    let unannounced = 0;
    /** What did not fit (the input waits meanwhile). */
    let backlog: Buffer | null = null;
    const announce = () => {
      if (unannounced > 0) post({ type: 'data', bytes: unannounced });
      unannounced = 0;
    };
    /** Copies what fits of `data` into the ring; returns the rest. */
    const write = (data: Buffer): Buffer | null => {
      const count = Math.min(data.length, RING_BYTES - inRing);
      const first = Math.min(count, RING_BYTES - at);
      data.copy(memory, at, 0, first);
      data.copy(memory, 0, first, count);
      at = (at + count) % RING_BYTES;
      inRing += count;
      if ((unannounced += count) >= ANNOUNCE_BYTES) announce();
      return count < data.length ? data.subarray(count) : null;
    };
    const onData = (chunk: Buffer) => {
      backlog = write(chunk);
      if (backlog !== null) {
        input.pause();
        announce();
      }
    };
    let ended = false;
    /** The end goes after the last bytes (the input may end while some still wait to fit). */
    const finish = () => {
      announce();
      post({ type: 'end' });
    };
    const onEnd = () => {
      ended = true;
      if (backlog === null) finish();
    };
    const onError = (error: Error) => post({ type: 'abort', message: error.message });
    const onClose = () => ended || post({ type: 'abort', message: 'the archive stream was closed before its end' });
    const onMessage = (message: Numbered<FromThread>) => {
      if (message.job !== job) return;
      if (message.type === 'consumed') {
        inRing -= message.bytes;
        if (backlog === null) return;
        backlog = write(backlog);
        if (backlog !== null) announce();
        else if (ended) finish();
        else input.resume();
      } else if (message.type === 'done') settle({ report: message.report }, true);
      else settle({ error: errorOf(message.name, message.message) }, true);
    };
    const onThreadError = (error: Error) => settle({ error }, false);
    const onExit = (code: number) => settle({ error: new Error(`the extraction thread stopped (exit code ${code})`) }, false);
    worker.on('message', onMessage).on('error', onThreadError).on('exit', onExit);
    post({ type: 'start', root, options });
    input.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}

/** The extraction's errors keep their kind across the thread boundary. */
function errorOf(name: string, message: string): Error {
  if (name === 'UnsafeArchiveError') return new UnsafeArchiveError(message);
  if (name === 'ArchiveTooLargeError') return new ArchiveTooLargeError(message);
  return new Error(message);
}

/** In the extraction thread: each archive from the ring, extracted; its outcome posted back. */
export function runExtractionThread(): void {
  const port = parentPort!;
  const memory = Buffer.from((workerData as { ring: SharedArrayBuffer }).ring);
  let current: { job: number; hear: (message: ToThread) => void } | null = null;
  port.on('message', (message: Numbered<ToThread>) => {
    if (message.type === 'start') current = { job: message.job, hear: extractFromRing(message.job, message.root, message.options, memory, port) };
    else if (current?.job === message.job) current.hear(message);
  });
}

/** One extraction in the thread, from the start of the ring; what it hears of its archive goes to the returned function. */
function extractFromRing(job: number, root: string, options: ThreadExtractionOptions, memory: Buffer, port: NonNullable<typeof parentPort>) {
  const post = (message: FromThread) => port.postMessage({ ...message, job } satisfies Numbered<FromThread>);
  /** Announced bytes not taken yet, where they start; whether the extractor waits for some; the end. */
  let available = 0;
  let at = 0;
  let wanted = false;
  let ended = false;
  /** Takes announced bytes out of the ring (its space back to the caller) while the extractor wants them. */
  const take = () => {
    wanted = false;
    while (available > 0) {
      const count = Math.min(available, ANNOUNCE_BYTES, RING_BYTES - at);
      // A copy of its own, by Buffer's copy (a memmove): Buffer.from of a view of shared memory
      // copies element by element, which took a quarter of the thread's time.
      const chunk = Buffer.allocUnsafeSlow(count);
      memory.copy(chunk, 0, at, at + count);
      at = (at + count) % RING_BYTES;
      available -= count;
      post({ type: 'consumed', bytes: count });
      if (!archive.push(chunk)) return;
    }
    if (ended) archive.push(null);
    else wanted = true;
  };
  const archive = new Readable({ highWaterMark: 1 << 20, read: take });
  openArchiveStream(archive)
    .then((tar) => {
      const budget = new ExtractionBudget(options.maxBytes, options.maxEntries);
      budget.bytes = options.used?.bytes ?? 0;
      budget.entries = options.used?.entries ?? 0;
      return extractTar(tar, root, { mode: options.mode, budget });
    })
    .then(
      (report) => post({ type: 'done', report }),
      (error: Error) => post({ type: 'failed', name: error.name, message: error.message }),
    );
  return (message: ToThread) => {
    if (message.type === 'data') available += message.bytes;
    else if (message.type === 'end') ended = true;
    else if (message.type === 'abort') return void archive.destroy(new Error(message.message));
    if (wanted) take();
  };
}
