import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

/**
 * The helper that holds a lock file's flock(2) for this process: perl (in every Debian), reading
 * `lock` / `unlock` lines and answering each with a line once done. It lives as long as this
 * process uses the lock (its stdin is our pipe: our exit, even a SIGKILL, closes it, the helper
 * exits and the kernel releases the lock), so taking the lock costs a pipe round trip, not a
 * process spawn (flock(1) per hold cost two spawns, tens of milliseconds on a loaded host).
 */
const HOLDER = String.raw`
use Fcntl qw(:flock O_RDWR O_CREAT);
$| = 1;
sysopen(my $fh, $ARGV[0], O_RDWR | O_CREAT, 0600) or die "open $ARGV[0]: $!\n";
print "ready\n";
while (my $line = <STDIN>) {
  chomp $line;
  if ($line eq 'lock') { flock($fh, LOCK_EX) or die "flock $ARGV[0]: $!\n"; print "locked\n"; }
  elsif ($line eq 'unlock') { flock($fh, LOCK_UN) or die "unlock $ARGV[0]: $!\n"; print "unlocked\n"; }
  else { die "unknown request $line\n"; }
}
`;

/** One lock file's holder process and the answers it owes, in order. */
class LockHolder {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly answers: { expect: string; resolve: () => void; reject: (error: Error) => void }[] = [];
  private buffered = '';
  private stderr = '';
  exited = false;

  constructor(lockPath: string) {
    this.child = spawn('perl', ['-e', HOLDER, lockPath], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.answers.push({ expect: 'ready', resolve: () => undefined, reject: () => undefined });
    this.child.stdout.on('data', (data: Buffer) => {
      this.buffered += data.toString();
      for (let end = this.buffered.indexOf('\n'); end >= 0; end = this.buffered.indexOf('\n')) {
        const line = this.buffered.slice(0, end);
        this.buffered = this.buffered.slice(end + 1);
        const answer = this.answers.shift();
        if (answer?.expect === line) answer.resolve();
        else answer?.reject(new Error(`lock holder for ${lockPath} answered "${line}" to ${answer.expect}`));
      }
      this.settleRef();
    });
    this.child.stderr.on('data', (data: Buffer) => (this.stderr = (this.stderr + data.toString()).slice(-2000)));
    this.child.stdin.on('error', () => undefined); // its exit says what went wrong
    const fail = (why: string) => {
      this.exited = true;
      const error = new Error(`lock holder for ${lockPath} ${why}: ${this.stderr.trim() || 'no message'}`);
      this.answers.splice(0).forEach((answer) => answer.reject(error));
    };
    this.child.once('error', (error) => fail(`could not start (${error.message})`));
    this.child.once('exit', (code, signal) => fail(`exited (${signal ?? code})`));
    this.settleRef();
  }

  /** Sends a request; resolves on its answer. */
  ask(request: 'lock' | 'unlock'): Promise<void> {
    if (this.exited) return Promise.reject(new Error('lock holder is gone'));
    const answered = new Promise<void>((resolve, reject) => this.answers.push({ expect: request === 'lock' ? 'locked' : 'unlocked', resolve, reject }));
    this.child.stdin.write(`${request}\n`);
    this.settleRef();
    return answered;
  }

  /** Keeps this process alive only while an answer is awaited: an idle holder never holds an exit up. */
  private settleRef(): void {
    const handle = (this.child.stdout as unknown as { _handle?: { ref(): void; unref(): void } })._handle;
    if (this.answers.length > 0) {
      this.child.ref();
      handle?.ref();
    } else {
      this.child.unref();
      handle?.unref();
    }
  }

  /** Ends the holder (its input closed, it exits and the kernel drops the file). */
  close(): void {
    this.child.stdin.end();
  }
}

/** A holder left idle this long goes (a driver's snapshot directory in a finished test, say). */
const IDLE_HOLDER_MS = 10_000;

/** A lock file's holder and the turns of this process's callers, one per lock path. */
interface HostLock {
  holder: LockHolder | null;
  tail: Promise<unknown>;
  /** Turns taken and not finished. */
  pending: number;
  idle: NodeJS.Timeout | null;
}

const locks = new Map<string, HostLock>();

/**
 * Runs `work` while holding an exclusive flock(2) on `lockPath`, across processes. Callers in this
 * process take turns first (in call order), so only one at a time asks the holder for the lock.
 */
export function withHostLock<T>(lockPath: string, work: () => Promise<T>): Promise<T> {
  let lock = locks.get(lockPath);
  if (!lock) locks.set(lockPath, (lock = { holder: null, tail: Promise.resolve(), pending: 0, idle: null }));
  const entry = lock;
  entry.pending++;
  if (entry.idle) clearTimeout(entry.idle);
  entry.idle = null;
  const turn = entry.tail.then(async () => {
    if (!entry.holder || entry.holder.exited) entry.holder = new LockHolder(lockPath);
    const holder = entry.holder;
    await holder.ask('lock');
    try {
      return await work();
    } finally {
      // Answered in order: the next turn's `lock` queues behind this `unlock` in the holder's input.
      holder.ask('unlock').catch(() => undefined); // a holder that died has released it with its exit
    }
  });
  entry.tail = turn.catch(() => undefined);
  void entry.tail.then(() => {
    if (--entry.pending > 0) return;
    entry.idle = setTimeout(() => {
      entry.holder?.close();
      locks.delete(lockPath);
    }, IDLE_HOLDER_MS).unref();
  });
  return turn;
}
