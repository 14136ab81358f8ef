import type { ExecChunk } from './hypervisor-driver.port';

/**
 * Runs a command in the guest with its stdout and stderr kept in the order it wrote them.
 *
 * Two pipes cannot do that: once both hold unread data, nothing says which write came first, and
 * a reader that wakes after a burst (`echo o1; echo e1 >&2; echo o2` is three writes in a few
 * microseconds) sees all of one stream, then all of the other. Here the command's stdout and
 * stderr are two datagram sockets connected to ONE receiving socket: the kernel queues each
 * write() as one datagram, in the order the writes happened, labelled by the socket it came from.
 * The receiver writes them out as records (1 byte 'o' or 'e', 4 bytes big-endian length, the
 * bytes), which `OrderedOutputDecoder` turns back into chunks.
 *
 * The program is perl without modules (perl-base is in every Debian root, and a module load costs
 * more than the rest under TCG); Linux x86 constants: AF_UNIX 1, SOCK_DGRAM 2, SOL_SOCKET 1,
 * SO_SNDBUF 7, SO_SNDBUFFORCE 32, EINTR 4. The sockets live in a fresh 0700 directory that is
 * removed once they are connected, so nothing else can send into the queue.
 *
 * A forked waiter runs the command and, when it exits, sends its exit status from a third
 * socket: that datagram queues behind everything the command wrote, so the receiver has written
 * every record when it exits with the command's exit code (128 + signal number if killed).
 * Output that processes left running write afterwards is dropped, as with a closed pipe.
 *
 * Semantics a command may notice: its stdout and stderr are sockets, not pipes; one write() may
 * carry at most 4 MiB (the kernel's largest datagram; a larger single write fails with ENOBUFS,
 * while stdio, `cat` and the like write far smaller pieces).
 *
 * Arguments: the output file ('-' for stdout; another path is appended to, then unlinked when
 * the command ends, since the driver reading it holds it open), '--', then argv.
 */
export const ORDERED_OUTPUT_PROGRAM = String.raw`
my ($out, $dashes, @cmd) = @ARGV;
sub fail { print STDERR "arbor-exec: $_[0]: $!\n"; exit 125 }
if ($out ne '-') { open(STDOUT, '>>', $out) or fail("open $out") }
binmode(STDOUT);
my $max = 8 << 20;
my ($dir, %sock);
for my $base ('/dev/shm', '/run', '/tmp') {
  $dir = sprintf('%s/.arbor-exec-%d-%08x', $base, $$, int(rand(4294967296)));
  last if mkdir($dir, 0700);
  $dir = undef;
}
defined $dir or fail('no writable /dev/shm, /run or /tmp for its sockets');
sub addr { pack('S Z*', 1, "$dir/$_[0]") }
for my $name (qw(r o e x)) {
  socket($sock{$name}, 1, 2, 0) or fail('socket');
  bind($sock{$name}, addr($name)) or fail("bind $dir/$name");
}
for my $name (qw(o e x)) { connect($sock{$name}, addr('r')) or fail('connect') }
unlink(map { "$dir/$_" } qw(r o e x));
rmdir($dir);
for my $name (qw(o e)) { setsockopt($sock{$name}, 1, 32, $max) or setsockopt($sock{$name}, 1, 7, $max) }
my $waiter = fork() // fail('fork');
if ($waiter == 0) {
  close($sock{r});
  my $child = fork() // exit(125);
  if ($child == 0) {
    open(STDOUT, '>&', $sock{o}) && open(STDERR, '>&', $sock{e}) or exit(125);
    exec { $cmd[0] } @cmd;
    print STDERR "$cmd[0]: $!\n";
    exit(127);
  }
  open(STDIN, '<', '/dev/null');
  waitpid($child, 0);
  send($sock{x}, pack('N', ($? & 127) ? 128 + ($? & 127) : $? >> 8), 0);
  exit(0);
}
open(STDIN, '<', '/dev/null');
close($sock{$_}) for qw(o e x);
my $buf = '';
for (;;) {
  my $from = recv($sock{r}, $buf, 2 * $max, 0);
  if (!defined $from) { next if $! == 4; fail('recv') }
  my $name = substr(unpack('x2 Z*', $from), -1);
  if ($name eq 'x') {
    waitpid($waiter, 0);
    unlink($out) if $out ne '-';
    exit(unpack('N', $buf));
  }
  next if $buf eq '' || ($name ne 'o' && $name ne 'e');
  my $record = $name . pack('N', length($buf)) . $buf;
  while ($record ne '') {
    my $written = syswrite(STDOUT, $record);
    if (!defined $written) { next if $! == 4; fail('write') }
    substr($record, 0, $written, '');
  }
}
`;

/** argv that runs `argv` under the ordered-output program, writing records to `output` ('-': stdout). */
export function orderedOutputArgv(output: string, argv: string[]): string[] {
  return ['/usr/bin/perl', '-e', ORDERED_OUTPUT_PROGRAM, '--', output, '--', ...argv];
}

const HEADER = 5;
const STREAMS: Record<number, ExecChunk['stream']> = { 0x6f: 'stdout', 0x65: 'stderr' };

/** Turns the program's records back into chunks; bytes may arrive split anywhere. */
export class OrderedOutputDecoder {
  private pending = Buffer.alloc(0);

  constructor(private readonly onChunk: (chunk: ExecChunk) => void) {}

  push(data: Buffer): void {
    let buffer = this.pending.length > 0 ? Buffer.concat([this.pending, data]) : data;
    while (buffer.length >= HEADER) {
      const stream = STREAMS[buffer[0]];
      if (!stream) throw new Error(`exec output record with unknown stream tag 0x${buffer[0].toString(16)}`);
      const length = buffer.readUInt32BE(1);
      if (buffer.length < HEADER + length) break;
      this.onChunk({ stream, data: Buffer.from(buffer.subarray(HEADER, HEADER + length)) });
      buffer = buffer.subarray(HEADER + length);
    }
    this.pending = Buffer.from(buffer);
  }

  /** Bytes of a record that never completed (the program was killed half-way), if any. */
  get incomplete(): number {
    return this.pending.length;
  }
}
