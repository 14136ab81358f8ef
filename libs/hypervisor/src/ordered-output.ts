import { isPending, type ExecChunk, type ExecChunkHandler } from './hypervisor-driver.port';

/**
 * Runs a command in the guest the way both drivers' exec does: environment, working directory,
 * and stdout and stderr kept in the order the command wrote them.
 *
 * Two pipes cannot keep that order: once both hold unread data, nothing says which write came
 * first, and a reader that wakes after a burst (`echo o1; echo e1 >&2; echo o2` is three writes in
 * a few microseconds) sees all of one stream, then all of the other. Here the command's stdout and
 * stderr are two datagram sockets connected to ONE receiving socket: the kernel queues each
 * write() as one datagram, in the order the writes happened, labelled by the socket it came from.
 * The program writes them out as records (1 byte 'o' or 'e', 4 bytes big-endian length, the
 * bytes), which `OrderedOutputDecoder` turns back into chunks.
 *
 * The program is perl without modules (perl-base is in every Debian root, and under TCG each
 * module, process and exec costs tens of milliseconds, so it also sets the environment and the
 * working directory itself rather than through `env` and `sh`). Linux x86-64 constants: AF_UNIX 1,
 * SOCK_DGRAM 2, SOL_SOCKET 1, SO_SNDBUF 7, SO_SNDBUFFORCE 32, MSG_DONTWAIT 0x40, WNOHANG 1,
 * EINTR 4, EAGAIN 11, personality(2) = syscall 135 with ADDR_NO_RANDOMIZE 0x0040000 (a caller may
 * start the program without address randomisation, which makes it much cheaper under TCG; the
 * command gets randomisation back). The sockets live in a fresh 0700 directory that is removed
 * once they are connected, so nothing else can send into the queue.
 *
 * When the command exits (SIGCHLD interrupts the wait; a short select timeout covers a signal
 * that lands just before it), everything it wrote is already queued: the program drains the
 * queue and exits with the command's exit code (128 + signal number if killed). Output that
 * processes left running write afterwards is dropped, as with a closed pipe.
 *
 * Semantics a command may notice: its stdout and stderr are sockets, not pipes; one write() may
 * carry at most 4 MiB (the kernel's largest datagram; a larger single write fails with ENOBUFS,
 * while stdio, `cat` and the like write far smaller pieces).
 */
export const ORDERED_EXEC_PROGRAM = String.raw`
my ($out, $dir, $envfile, @rest) = @ARGV;
my @pairs;
push(@pairs, shift(@rest)) while @rest && $rest[0] ne '--';
shift(@rest);
my @cmd = @rest;
sub fail { print STDERR "arbor-exec: $_[0]: $!\n"; exit 125 }
if ($out ne '-') { open(STDOUT, '>>', $out) or fail("open $out") }
binmode(STDOUT);
if ($envfile ne '' && open(my $file, '<', $envfile)) {
  while (my $line = <$file>) {
    chomp($line);
    next unless $line =~ /^\s*([A-Za-z_][A-Za-z0-9_]*)=(.*)$/;
    my ($key, $value) = ($1, $2);
    $value = $1 if $value =~ /^"(.*)"$/ || $value =~ /^'(.*)'$/;
    $ENV{$key} = $value;
  }
}
for (@pairs) { $ENV{$1} = $2 if /^([^=]+)=(.*)$/s }
my $max = 8 << 20;
my ($sockdir, %sock);
for my $base ('/dev/shm', '/run', '/tmp') {
  $sockdir = sprintf('%s/.arbor-exec-%d-%08x', $base, $$, int(rand(4294967296)));
  last if mkdir($sockdir, 0700);
  $sockdir = undef;
}
defined $sockdir or fail('no writable /dev/shm, /run or /tmp for its sockets');
sub addr { pack('S Z*', 1, "$sockdir/$_[0]") }
for my $name (qw(r o e)) {
  socket($sock{$name}, 1, 2, 0) or fail('socket');
  bind($sock{$name}, addr($name)) or fail("bind $sockdir/$name");
}
for my $name (qw(o e)) {
  connect($sock{$name}, addr('r')) or fail('connect');
  setsockopt($sock{$name}, 1, 32, $max) or setsockopt($sock{$name}, 1, 7, $max);
}
unlink(map { "$sockdir/$_" } qw(r o e));
rmdir($sockdir);
$SIG{CHLD} = sub {};
my $child = fork() // fail('fork');
if ($child == 0) {
  open(STDOUT, '>&', $sock{o}) && open(STDERR, '>&', $sock{e}) or exit(125);
  my $persona = syscall(135, 0xffffffff);
  syscall(135, $persona & ~0x0040000) if $persona > 0 && ($persona & 0x0040000);
  chdir($dir) or do { print STDERR "arbor-exec: cd $dir: $!\n"; exit(1) };
  exec { $cmd[0] } @cmd;
  print STDERR "$cmd[0]: $!\n";
  exit(127);
}
open(STDIN, '<', '/dev/null');
close($sock{o});
close($sock{e});
my ($buf, $status) = ('');
sub record {
  my $record = $_[0] . pack('N', length($buf)) . $buf;
  while ($record ne '') {
    my $written = syswrite(STDOUT, $record);
    if (!defined $written) { next if $! == 4; fail('write') }
    substr($record, 0, $written, '');
  }
}
for (;;) {
  my $from = recv($sock{r}, $buf, 2 * $max, 0x40);
  if (defined $from) {
    my $name = substr(unpack('x2 Z*', $from), -1);
    record($name) if $buf ne '' && ($name eq 'o' || $name eq 'e');
    next;
  }
  fail('recv') unless $! == 11 || $! == 4;
  last if defined $status;
  if (waitpid($child, 1) == $child) { $status = $?; next }
  my $ready = '';
  vec($ready, fileno($sock{r}), 1) = 1;
  select($ready, undef, undef, 0.2);
}
unlink($out) if $out ne '-';
exit(($status & 127) ? 128 + ($status & 127) : $status >> 8);
`;

export interface OrderedExec {
  /** Where the records go: '-' for stdout, or a file appended to and unlinked when the command ends. */
  output: string;
  workingDir: string;
  /** A KEY=VALUE file read in the guest (blank lines and comments skipped, quotes dropped), or ''. */
  environmentFile: string;
  /** Set after the environment file, over the environment the program was started with. */
  env: Record<string, string>;
  argv: string[];
}

/** argv that runs a command under the ordered-exec program. */
export function orderedExecArgv(exec: OrderedExec): string[] {
  const pairs = Object.entries(exec.env).map(([key, value]) => `${key}=${value}`);
  return ['/usr/bin/perl', '-e', ORDERED_EXEC_PROGRAM, '--', exec.output, exec.workingDir, exec.environmentFile, ...pairs, '--', ...exec.argv];
}

const HEADER = 5;
const STREAMS: Record<number, ExecChunk['stream']> = { 0x6f: 'stdout', 0x65: 'stderr' };

/**
 * The longest record taken: the program receives at most 16 MiB at once (2 × its 8 MiB socket
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
