import { readlinkSync } from 'node:fs';
import { LineHelper } from '../host/line-helper';
import { runCommand } from '../host/run-command';

/**
 * A helper (perl, in every Debian) that sets the hostname in a machine's UTS namespace: for each
 * `<init pid> <hostname>` line it enters that namespace (setns, syscall 308 on x86_64), sets the
 * name (sethostname, 170), goes back to its own, and answers `ok` or `error <why>`; should it not
 * get back, it exits rather than serve in a machine's namespace. A process in the host's own UTS
 * namespace is refused: its hostname is the host's.
 */
const SETTER = String.raw`
$| = 1;
open(my $own, '<', '/proc/self/ns/uts') or die "/proc/self/ns/uts: $!\n";
while (my $line = <STDIN>) {
  chomp $line;
  my ($pid, $name) = split(/ /, $line, 2);
  open(my $ns, '<', "/proc/$pid/ns/uts") or do { print "error /proc/$pid/ns/uts: $!\n"; next };
  my ($dev, $ino) = (stat($ns))[0, 1];
  my ($own_dev, $own_ino) = (stat($own))[0, 1];
  if ($dev == $own_dev && $ino == $own_ino) { print "error process $pid is in the host's own UTS namespace\n"; next }
  if (syscall(308, fileno($ns), 0x04000000) != 0) { print "error setns: $!\n"; next }
  my $set = syscall(170, $name, length($name));
  my $why = "$!";
  syscall(308, fileno($own), 0x04000000) == 0 or die "could not return to its own UTS namespace: $!\n";
  print($set == 0 ? "ok\n" : "error sethostname: $why\n");
}
`;

let setter: LineHelper | null = null;

/**
 * Sets the hostname of a running machine from the host, as host root, which may change a UTS
 * namespace the machine's user namespace owns (guest root, without CAP_SYS_ADMIN, cannot). The
 * runtime sets it at start from the config; this is for a warm machine claimed by a VM
 * (warm-pool.ts). On x86_64 a long-lived helper does it (a pipe round trip); elsewhere `nsenter
 * --uts hostname` (a process each).
 */
export async function setMachineHostname(initPid: number, hostname: string): Promise<void> {
  if (!/^[A-Za-z0-9][A-Za-z0-9.-]{0,62}$/.test(hostname)) throw new Error(`invalid hostname ${JSON.stringify(hostname)}`);
  if (!Number.isInteger(initPid) || initPid < 2) throw new Error(`invalid init pid ${initPid}`);
  if (process.arch !== 'x64') {
    if (readlinkSync(`/proc/${initPid}/ns/uts`) === readlinkSync('/proc/self/ns/uts')) throw new Error(`process ${initPid} is in the host's own UTS namespace`);
    await runCommand('nsenter', [`--target=${initPid}`, '--uts', 'hostname', hostname]);
    return;
  }
  if (!setter || setter.exited) setter = new LineHelper(['perl', '-e', SETTER], 'hostname setter');
  const answer = await setter.ask(`${initPid} ${hostname}`);
  if (answer !== 'ok') throw new Error(`setting the hostname of the machine of init ${initPid} failed: ${answer.replace(/^error /, '')}`);
}
