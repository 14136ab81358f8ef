import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

/**
 * A long-lived helper process that answers one line for each line it is sent, in order: what the
 * drivers run for host work they do often (holding a lock, setting a hostname), so that it costs a
 * pipe round trip instead of a process spawn (tens of milliseconds each on a loaded host). Its
 * stdin is our pipe: when this process exits, even killed, the helper reads end of file and exits.
 * It never keeps this process alive while nothing is asked of it.
 */
export class LineHelper {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly answers: { resolve: (line: string) => void; reject: (error: Error) => void }[] = [];
  private buffered = '';
  private stderr = '';
  private gone: Error | null = null;

  /** `argv`: the helper's command line; `name` says what it is in errors. */
  constructor(argv: string[], private readonly name: string) {
    this.child = spawn(argv[0], argv.slice(1), { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout.on('data', (data: Buffer) => {
      this.buffered += data.toString();
      for (let end = this.buffered.indexOf('\n'); end >= 0; end = this.buffered.indexOf('\n')) {
        const line = this.buffered.slice(0, end);
        this.buffered = this.buffered.slice(end + 1);
        this.answers.shift()?.resolve(line);
      }
      this.settleRef();
    });
    this.child.stderr.on('data', (data: Buffer) => (this.stderr = (this.stderr + data.toString()).slice(-2000)));
    this.child.stdin.on('error', () => undefined); // its exit says what went wrong
    const fail = (why: string) => {
      this.gone ??= new Error(`${this.name} ${why}: ${this.stderr.trim() || 'no message'}`);
      this.answers.splice(0).forEach((answer) => answer.reject(this.gone!));
    };
    this.child.once('error', (error) => fail(`could not start (${error.message})`));
    this.child.once('exit', (code, signal) => fail(`exited (${signal ?? code})`));
    this.settleRef();
  }

  /** Whether the helper has exited (a new one is needed). */
  get exited(): boolean {
    return this.gone !== null;
  }

  /** Sends one line; resolves with the helper's answer to it. */
  ask(line: string): Promise<string> {
    if (this.gone) return Promise.reject(this.gone);
    const answered = new Promise<string>((resolve, reject) => this.answers.push({ resolve, reject }));
    this.child.stdin.write(`${line}\n`);
    this.settleRef();
    return answered;
  }

  /** Ends the helper: its input closed, it exits. */
  close(): void {
    this.child.stdin.end();
  }

  /** Keeps this process alive only while an answer is awaited (its pipes' handles too, each of which would). */
  private settleRef(): void {
    const awaited = this.answers.length > 0;
    if (awaited) this.child.ref();
    else this.child.unref();
    for (const stream of [this.child.stdin, this.child.stdout, this.child.stderr]) {
      const handle = (stream as unknown as { _handle?: { ref(): void; unref(): void } })._handle;
      if (awaited) handle?.ref();
      else handle?.unref();
    }
  }
}
