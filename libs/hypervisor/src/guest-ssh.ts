import { readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The SSH server both drivers' guests run: Debian's openssh-server, started by the machine's init
 * and kept running (supervised), accepting the VM's own key for root (the control plane's key pair:
 * its public half is /root/.ssh/authorized_keys, GET /vm/{id}/ssh_key hands out the private half)
 * with a host key of the machine's own (/etc/ssh/ssh_host_ed25519_key, made fresh for every
 * machine, a branch child or a restored machine included). No passwords.
 */

/** Where the images put Arbor's sshd settings (Debian's sshd_config includes the directory first, and sshd keeps the first value it reads). */
export const SSHD_CONFIG_PATH = 'etc/ssh/sshd_config.d/arbor.conf';

export const SSHD_CONFIG = `# Arbor: root logs in with the VM's own key (GET /vm/{id}/ssh_key); no passwords.
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
# The machine's own host key, made for it when it was created (or restored, or branched).
HostKey /etc/ssh/ssh_host_ed25519_key
`;

/**
 * sshd in the foreground, so its supervisor sees it exit; its log on the guest's own disk (a
 * host-side log would grow with every connection anyone makes).
 */
export const SSHD_ARGV = ['/usr/sbin/sshd', '-D', '-E', '/var/log/sshd.log'];

/**
 * A guest init's last step, in perl (perl-base is in every Debian root): starts every service
 * (argv lists), starts each again half a second after it exits (sshd fails until the machine
 * has a host key, and a user may restart it), and reaps every orphan (wait() collects any child,
 * re-parented ones included), as a PID 1 must. Services are started through /bin/sh so their
 * directories (sshd's /run/sshd) can be made first.
 */
export function serviceSupervisor(services: string[][]): string {
  const list = services.map((argv) => `[${argv.map((arg) => `'${arg.replace(/['\\]/g, '\\$&')}'`).join(', ')}]`).join(', ');
  return `
my @services = (${list});
my %running;
sub start {
  my ($index) = @_;
  my $pid = fork();
  if (defined $pid && $pid == 0) { exec @{$services[$index]}; exit 127; }
  $running{$pid} = $index if defined $pid;
}
start($_) for 0 .. $#services;
while (1) {
  my $pid = wait();
  if ($pid == -1) { sleep 1; next; }
  next unless exists $running{$pid};
  my $index = delete $running{$pid};
  select(undef, undef, undef, 0.5);
  start($index);
}
`;
}

/** /run/sshd (sshd's privilege separation directory), then the supervisor: the shell part of a guest init. */
export function guestServicesInit(services: string[][]): string {
  return `mkdir -p /run/sshd && chmod 0755 /run/sshd\nexec perl -e '${serviceSupervisor(services).replace(/'/g, `'\\''`)}'\n`;
}

/**
 * Makes a freshly bootstrapped root's sshd Arbor's: its settings, and none of the host keys the
 * package made at install (every machine gets its own; a key in the image would be everyone's).
 */
export async function configureSshd(root: string): Promise<void> {
  await writeFile(join(root, SSHD_CONFIG_PATH), SSHD_CONFIG, { mode: 0o644 });
  for (const name of await readdir(join(root, 'etc/ssh'))) {
    if (name.startsWith('ssh_host_')) await rm(join(root, 'etc/ssh', name), { force: true });
  }
}
