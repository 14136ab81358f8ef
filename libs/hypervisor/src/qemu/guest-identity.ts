import { randomBytes } from 'node:crypto';
import type { MachineIdentity } from '../hypervisor-driver.port';
import { formatEnvironmentFile } from '../guest-environment';
import type { GuestAgentClient } from './guest-agent-client';
import { runInGuestOrFail } from './guest-command';

/**
 * Makes the guest this machine: its network (MAC and addresses, when it has a NIC), hostname, a
 * new machine-id, a new SSH host key, root's authorized key and /etc/environment. Run after the
 * first boot and after every restore, so machines started from one snapshot never share an
 * identity or an address. sshd is stopped, its supervisor (guest-ssh.ts) starts it again with
 * the new host key, and the script waits until the new one has written its pid file, which sshd
 * does once it listens: a restored machine's sshd was the source's, with the source's key, and at
 * a first boot sshd keeps failing until a key exists. (Not an ssh-keyscan: a key exchange in an
 * emulated guest on a loaded host can take longer than any sensible per-try timeout.)
 *
 * First the kernel's random number generator: a machine restored from memory starts with the
 * snapshot's generator state, exactly like every sibling restored from it, and the kernel reseeds
 * only once a minute; until then all of them draw the same bytes (the same SSH host key). So the
 * host's randomness (the first line of stdin, never on a command line) is mixed in and the
 * generator reseeded at once (RNDRESEEDCRNG, 0x5207). ENODATA (61): not seeded yet, early in a
 * first boot, where the kernel seeds it itself. The rest of stdin is /etc/environment.
 */
const APPLY_IDENTITY = `hostname=$1 machine_id=$2 authorized_key=$3 network=$4
if [ -n "$network" ]; then printf '%s' "$network" | ip -batch - || exit 1; fi
read -r seed
printf '%s' "$seed" > /dev/urandom
perl -e 'open(my $u, ">", "/dev/urandom") or die "/dev/urandom: $!\\n"; ioctl($u, 0x5207, 0) or $! + 0 == 61 or die "RNDRESEEDCRNG: $!\\n"' || exit 1
cat > /etc/environment
printf '%s\\n' "$hostname" > /etc/hostname
printf '%s' "$hostname" > /proc/sys/kernel/hostname
printf '127.0.0.1\\tlocalhost\\n127.0.1.1\\t%s\\n' "$hostname" > /etc/hosts
printf '%s\\n' "$machine_id" > /etc/machine-id
rm -f /etc/ssh/ssh_host_*
ssh-keygen -q -t ed25519 -N '' -C "root@$hostname" -f /etc/ssh/ssh_host_ed25519_key
mkdir -p /root/.ssh && chmod 700 /root/.ssh
if [ -n "$authorized_key" ]; then
  printf '%s\\n' "$authorized_key" > /root/.ssh/authorized_keys && chmod 600 /root/.ssh/authorized_keys
else
  rm -f /root/.ssh/authorized_keys
fi
old_sshd=$(cat /run/sshd.pid 2>/dev/null)
[ -n "$old_sshd" ] && kill "$old_sshd" 2>/dev/null
end=$(( $(date +%s) + 120 ))
until sshd=$(cat /run/sshd.pid 2>/dev/null) && [ -n "$sshd" ] && [ "$sshd" != "$old_sshd" ] && kill -0 "$sshd" 2>/dev/null; do
  [ "$(date +%s)" -lt "$end" ] || { echo "sshd did not start again with the new host key: $(tail -n 3 /var/log/sshd.log 2>/dev/null)" >&2; exit 1; }
  sleep 0.1
done`;

export async function applyGuestIdentity(
  agent: GuestAgentClient,
  identity: MachineIdentity,
  env: Record<string, string>,
  /** `ip -batch` lines configuring the guest's eth0 (null: a machine without a NIC). */
  networkBatch: string | null,
): Promise<void> {
  const machineId = randomBytes(16).toString('hex');
  const seed = randomBytes(32).toString('hex');
  await runInGuestOrFail(
    agent,
    ['/bin/sh', '-c', APPLY_IDENTITY, 'arbor-identity', identity.hostname, machineId, identity.ssh_authorized_key ?? '', networkBatch ?? ''],
    Buffer.from(`${seed}\n${formatEnvironmentFile(env)}`),
  );
}

/** Sets the guest clock from the host's (a restored guest's clock stands where the snapshot left it). */
export async function setGuestClock(agent: GuestAgentClient): Promise<void> {
  await agent.request('guest-set-time', { time: Date.now() * 1_000_000 });
}
