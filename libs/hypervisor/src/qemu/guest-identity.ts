import { randomBytes } from 'node:crypto';
import type { MachineIdentity } from '../hypervisor-driver.port';
import { formatEnvironmentFile } from '../guest-environment';
import { newOpenSshHostKey } from '../host/openssh-key';
import type { GuestAgentClient } from './guest-agent-client';
import { exitCodeOf, GUEST_DEFAULT_ENV, waitForGuestExit } from './guest-command';

/**
 * Makes the guest this machine: its network (MAC and addresses, when it has a NIC), hostname, a
 * new machine-id, a new SSH host key, root's authorized key and /etc/environment. Run after the
 * first boot and after every restore, so machines started from one snapshot never share an
 * identity or an address.
 *
 * Everything that can be is made on the host, where it costs microseconds rather than the
 * hundreds of milliseconds an emulated guest takes: the machine id, the SSH host key pair
 * (newOpenSshHostKey, not ssh-keygen in the guest) and the randomness. The guest runs one perl
 * program (perl-base is in the image) that writes what it is given, each file replaced by a
 * rename, and starts only `ip` (for the network, while the rest goes on). Its sshd then serves
 * the new key: a running
 * one (a restored machine's is the source's, with the source's key loaded) is sent SIGHUP, on
 * which sshd executes itself again under the same pid and reads its keys afresh; at a first boot
 * none runs yet (it fails until a key exists) and its supervisor (guest-ssh.ts) starts it within
 * half a second. The program returns once the new sshd has written its pid file, which sshd does
 * once it listens. (Not an ssh-keyscan: a key exchange in an emulated guest on a loaded host can
 * take longer than any sensible per-try timeout.)
 *
 * First the kernel's random number generator: a machine restored from memory starts with the
 * snapshot's generator state, exactly like every sibling restored from it, and the kernel reseeds
 * only once a minute; until then all of them draw the same bytes. So the host's randomness is
 * mixed in and the generator reseeded at once (RNDRESEEDCRNG, 0x5207; ENODATA, 61: not seeded
 * yet, early in a first boot, where the kernel seeds it itself).
 *
 * argv: hostname, machine id, authorized key, the host's time in milliseconds; stdin:
 * length-prefixed sections (`<bytes>\n<data>`):
 * the seed, /etc/environment, the host key, its public line, the network's `ip -batch` lines.
 */
const APPLY_IDENTITY = String.raw`
use strict;
my ($hostname, $machine_id, $authorized, $host_ms) = @ARGV;
# The host's time (a restored guest's clock stands where its snapshot left it): settimeofday, 164.
# The RTC needs nothing: QEMU's follows the host's clock across a migration.
syscall(164, pack('q q', int($host_ms / 1000), ($host_ms % 1000) * 1000), 0) == 0 or die "settimeofday: $!\n";
binmode(STDIN);
my $input = do { local $/; <STDIN> };
my @parts;
while (length($input)) {
  $input =~ s/^(\d+)\n// or die "malformed input\n";
  push(@parts, substr($input, 0, $1, ''));
}
my ($seed, $environment, $key, $public, $network) = @parts;
sub put {
  my ($path, $content, $mode) = @_;
  my $new = "$path.arbor-new";
  open(my $file, '>', $new) or die "$new: $!\n";
  binmode($file);
  print $file $content;
  close($file) or die "$new: $!\n";
  chmod($mode, $new) or die "chmod $new: $!\n";
  rename($new, $path) or die "rename $new: $!\n";
}
open(my $random, '>', '/dev/urandom') or die "/dev/urandom: $!\n";
syswrite($random, $seed);
ioctl($random, 0x5207, 0) or $! + 0 == 61 or die "RNDRESEEDCRNG: $!\n";
close($random);
# The NIC is configured while the files are written and sshd starts again: neither needs it.
my $ip;
if (length($network)) {
  open($ip, '|-', 'ip', '-batch', '-') or die "ip: $!\n";
  print $ip $network;
}
put('/etc/environment', $environment, 0644);
put('/etc/hostname', "$hostname\n", 0644);
open(my $kernel, '>', '/proc/sys/kernel/hostname') or die "hostname: $!\n";
print $kernel $hostname;
close($kernel) or die "hostname: $!\n";
put('/etc/hosts', "127.0.0.1\tlocalhost\n127.0.1.1\t$hostname\n", 0644);
put('/etc/machine-id', "$machine_id\n", 0444);
unlink(grep { !/ed25519_key(\.pub)?$/ } glob('/etc/ssh/ssh_host_*'));
put('/etc/ssh/ssh_host_ed25519_key', $key, 0600);
put('/etc/ssh/ssh_host_ed25519_key.pub', $public, 0644);
mkdir('/root/.ssh', 0700);
chmod(0700, '/root/.ssh');
if (length($authorized)) { put('/root/.ssh/authorized_keys', "$authorized\n", 0600) } else { unlink('/root/.ssh/authorized_keys') }
my $pidfile = '/run/sshd.pid';
sub pid_of { open(my $f, '<', $pidfile) or return 0; my $pid = <$f> // ''; chomp($pid); return $pid =~ /^\d+$/ ? $pid : 0 }
my $running = pid_of();
unlink($pidfile);
kill('HUP', $running) if $running && kill(0, $running);
my $deadline = time() + 120;
for (;;) {
  my $pid = pid_of();
  last if $pid && kill(0, $pid);
  if (time() > $deadline) {
    my $log = '';
    if (open(my $f, '<', '/var/log/sshd.log')) { my @lines = <$f>; $log = join('', @lines[-3 .. -1]) if @lines >= 3 }
    die "sshd did not start again with the new host key: $log\n";
  }
  select(undef, undef, undef, 0.02);
}
if ($ip) { close($ip) or die "ip -batch failed\n" }
`;

/** A section of the program's input: its length in bytes, a newline, the bytes. */
function section(data: string | Buffer): Buffer {
  const bytes = typeof data === 'string' ? Buffer.from(data) : data;
  return Buffer.concat([Buffer.from(`${bytes.length}\n`), bytes]);
}

/**
 * Applies the identity and the host's time (see APPLY_IDENTITY). Not the agent's guest-set-time:
 * it also runs hwclock, which an emulated guest takes most of a second over, and QEMU's RTC
 * already follows the host's clock.
 */
export async function applyGuestIdentity(
  agent: GuestAgentClient,
  identity: MachineIdentity,
  env: Record<string, string>,
  /** `ip -batch` lines configuring the guest's eth0 (null: a machine without a NIC). */
  networkBatch: string | null,
): Promise<void> {
  const machineId = randomBytes(16).toString('hex');
  const hostKey = newOpenSshHostKey(`root@${identity.hostname}`);
  const input = Buffer.concat([
    section(randomBytes(32)),
    section(formatEnvironmentFile(env)),
    section(hostKey.privateKey),
    section(`${hostKey.publicKey}\n`),
    section(networkBatch ?? ''),
  ]);
  // Without address randomisation (setarch -R): under TCG a process at randomised addresses is
  // translated afresh, and perl then starts in ~100 ms instead of ~25 (see guest-exec.ts).
  const argv = ['/usr/bin/setarch', '-R', '/usr/bin/perl', '-e', APPLY_IDENTITY, identity.hostname, machineId, identity.ssh_authorized_key ?? '', String(Date.now())];
  const { pid } = await agent.request<{ pid: number }>('guest-exec', {
    path: argv[0],
    arg: argv.slice(1),
    env: GUEST_DEFAULT_ENV,
    'capture-output': true,
    'input-data': input.toString('base64'),
  });
  // Polled closely for as long as it usually runs under emulation (a few seconds): a machine is
  // ready the moment it ends.
  const status = await waitForGuestExit(agent, pid, undefined, 200);
  if (exitCodeOf(status) !== 0) {
    const stderr = Buffer.from(status['err-data'] ?? '', 'base64').toString().trim();
    throw new Error(`applying the identity of ${identity.hostname} in the guest exited ${exitCodeOf(status)}: ${stderr}`);
  }
}
