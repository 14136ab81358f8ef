import { LineHelper } from './line-helper';

/**
 * The helper that holds a lock file's flock(2) for this process (a LineHelper): perl (in every
 * Debian), reading `lock` / `unlock` lines and answering each once done. Our exit, even a SIGKILL,
 * ends it, and the kernel releases the lock; taking the lock costs a pipe round trip, not a
 * process spawn (flock(1) per hold cost two, tens of milliseconds on a loaded host).
 */
const HOLDER = String.raw`
use Fcntl qw(:flock O_RDWR O_CREAT);
$| = 1;
sysopen(my $fh, $ARGV[0], O_RDWR | O_CREAT, 0600) or die "open $ARGV[0]: $!\n";
while (my $line = <STDIN>) {
  chomp $line;
  if ($line eq 'lock') { flock($fh, LOCK_EX) or die "flock $ARGV[0]: $!\n"; print "locked\n"; }
  elsif ($line eq 'unlock') { flock($fh, LOCK_UN) or die "unlock $ARGV[0]: $!\n"; print "unlocked\n"; }
  else { die "unknown request $line\n"; }
}
`;

/** One lock file's holder process. */
class LockHolder {
  private readonly helper: LineHelper;

  constructor(private readonly lockPath: string) {
    this.helper = new LineHelper(['perl', '-e', HOLDER, lockPath], `lock holder for ${lockPath}`);
  }

  get exited(): boolean {
    return this.helper.exited;
  }

  /** Asks for the lock (`lock`) or gives it back (`unlock`); resolves once done. */
  async ask(request: 'lock' | 'unlock'): Promise<void> {
    const answer = await this.helper.ask(request);
    const expected = request === 'lock' ? 'locked' : 'unlocked';
    if (answer !== expected) throw new Error(`lock holder for ${this.lockPath} answered "${answer}" to ${request}`);
  }

  close(): void {
    this.helper.close();
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
