import { isPending, type ExecChunk, type ExecChunkHandler } from './hypervisor-driver.port';
import { KIT_PATHS } from './kit/kit-paths';

/**
 * Runs a command in the guest the way both drivers' exec does: environment, working directory,
 * and stdout and stderr kept in the order the command wrote them.
 *
 * Two pipes cannot keep that order: once both hold unread data, nothing says which write came
 * first, and a reader that wakes after a burst (`echo o1; echo e1 >&2; echo o2` is three writes in
 * a few microseconds) sees all of one stream, then all of the other. The guest kit's static helper
 * (kit/arbor-guest.c, `exec`) gives the command two datagram sockets connected to ONE receiving
 * socket instead: the kernel queues each write() as one datagram, in the order the writes
 * happened, labelled by the socket it came from. The helper writes them out as records (1 byte 'o'
 * or 'e', 4 bytes big-endian length, the bytes), which `OrderedOutputDecoder` turns back into
 * chunks. One static program for every image: it needs no shell, perl or libc of the image's.
 *
 * It sets the environment (the one it was started with, then the environment file read inside
 * the guest, then the pairs) and the working directory itself, and runs argv without a shell
 * (execvp: PATH as the environment has it by then). When the command exits, everything it wrote
 * is already queued: the helper drains the queue and exits with the command's exit code (128 +
 * signal number if killed). Output that processes left running write afterwards is dropped, as
 * with a closed pipe. With a timeout it is the subreaper of everything the command starts and
 * kills all of it when the time is up (exit code 124).
 *
 * Semantics a command may notice: its stdout and stderr are sockets, not pipes; one write() may
 * carry at most 4 MiB (the kernel's largest datagram; a larger single write fails with ENOBUFS,
 * while stdio, `cat` and the like write far smaller pieces).
 */
export interface OrderedExec {
  /** Where the records go: '-' for stdout, or a file appended to and unlinked when the command ends. */
  output: string;
  workingDir: string;
  /** A KEY=VALUE file read in the guest (blank lines and comments skipped, quotes dropped), or ''. */
  environmentFile: string;
  /** Set after the environment file, over the environment the program was started with. */
  env: Record<string, string>;
  argv: string[];
  /** Kill the command and everything it started after this many seconds (exit code 124); 0: never. */
  timeoutSecs?: number;
  /** The helper's path (default: the kit's in the guest; tests run a host build). */
  helper?: string;
}

/** argv that runs a command under the ordered-exec helper. */
export function orderedExecArgv(exec: OrderedExec): string[] {
  const options = ['--output', exec.output, '--cwd', exec.workingDir];
  if (exec.environmentFile) options.push('--env-file', exec.environmentFile);
  if (exec.timeoutSecs && exec.timeoutSecs > 0) options.push('--timeout', String(Math.ceil(exec.timeoutSecs)));
  for (const [key, value] of Object.entries(exec.env)) options.push('--env', `${key}=${value}`);
  return [exec.helper ?? KIT_PATHS.helper, 'exec', ...options, '--', ...exec.argv];
}

const HEADER = 5;
const STREAMS: Record<number, ExecChunk['stream']> = { 0x6f: 'stdout', 0x65: 'stderr' };

/**
 * The longest record taken: the helper receives at most 16 MiB at once (2 × its 8 MiB socket
 * buffer; the kernel's datagrams are smaller still). The records come out of the guest, where a
 * user may replace the program: a header announcing more is no record of it, and the exec fails
 * rather than buffering towards a length the guest chose.
 */
export const MAX_RECORD_BYTES = 16 * 1024 * 1024;

/**
 * Turns the program's records back into chunks; bytes may arrive split anywhere. Pieces are kept
 * as they came and joined once per record, so a large record read in many pieces is copied once.
 */
export class OrderedOutputDecoder {
  private pieces: Buffer[] = [];
  private size = 0;

  constructor(private readonly onChunk: ExecChunkHandler) {}

  /**
   * Decodes what came; resolves when every chunk handed on was taken (see ExecChunkHandler), or
   * returns undefined when none asked to wait. Throws on bytes that are no record.
   */
  push(data: Buffer): Promise<void> | undefined {
    if (data.length === 0) return undefined;
    this.pieces.push(data);
    this.size += data.length;
    const waits: PromiseLike<unknown>[] = [];
    while (this.size >= HEADER) {
      const header = this.pieces[0].length >= HEADER ? this.pieces[0] : Buffer.concat(this.pieces, HEADER);
      const stream = STREAMS[header[0]];
      if (!stream) throw new Error(`exec output record with unknown stream tag 0x${header[0].toString(16)}`);
      const length = header.readUInt32BE(1);
      if (length > MAX_RECORD_BYTES) throw new Error(`exec output record of ${length} bytes announced, more than the ${MAX_RECORD_BYTES} a record may hold`);
      if (this.size < HEADER + length) break;
      const wait = this.onChunk({ stream, data: this.take(HEADER + length).subarray(HEADER) });
      if (isPending(wait)) waits.push(wait);
    }
    return waits.length ? Promise.all(waits).then(() => undefined) : undefined;
  }

  /** Bytes of a record that never completed (the program was killed half-way), if any. */
  get incomplete(): number {
    return this.size;
  }

  /** The output is over: a record cut off half-way is said on stderr rather than dropped silently. */
  end(): void {
    if (this.size === 0) return;
    void this.onChunk({ stream: 'stderr', data: Buffer.from(`arbor-exec: output cut off (${this.size} bytes of an unfinished record)\n`) });
    this.pieces = [];
    this.size = 0;
  }

  private take(bytes: number): Buffer {
    const whole = this.pieces.length === 1 ? this.pieces[0] : Buffer.concat(this.pieces, this.size);
    this.pieces = whole.length > bytes ? [whole.subarray(bytes)] : [];
    this.size -= bytes;
    return whole.subarray(0, bytes);
  }
}
