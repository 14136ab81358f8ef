import { randomBytes } from 'node:crypto';
import type { MachineIdentity } from '../hypervisor-driver.port';
import { formatEnvironmentFile } from '../guest-environment';
import type { GuestAgentClient } from './guest-agent-client';
import { newOpenSshHostKey } from '../host/openssh-key';
import { SSHD_ENVIRONMENT_CONF, SSHD_LOG, SSHD_PID_FILE } from '../kit/kit-files';
import { KIT_PATHS, kitShell } from '../kit/kit-paths';
import { runInGuest, runInGuestOrFail } from './guest-command';

/** The identity as kits before `arbor-guest identity` make it: the same steps, each a process of the kit's busybox. */
const APPLY_IDENTITY_SCRIPT = `hostname=$1 machine_id=$2 authorized_key=$3 network=$4 now_ns=$5
bb=${KIT_PATHS.busybox}
${KIT_PATHS.helper} set-clock "$now_ns" || exit 1
if [ -n "$network" ]; then printf '%s' "$network" | ${KIT_PATHS.ip} -batch - || exit 1; fi
read -r seed
read -r host_key
read -r host_key_pub
printf '%s' "$seed" | ${KIT_PATHS.helper} reseed || exit 1
$bb mkdir -p /etc/ssh /root/.ssh
$bb chmod 700 /root/.ssh
$bb cat > /etc/environment
printf '%s\\n' "$hostname" > /etc/hostname
printf '%s' "$hostname" > /proc/sys/kernel/hostname
printf '127.0.0.1\\tlocalhost\\n127.0.1.1\\t%s\\n' "$hostname" > /etc/hosts
printf '%s\\n' "$machine_id" > /etc/machine-id
$bb rm -f /etc/ssh/ssh_host_*
(umask 077 && printf '%s' "$host_key" | $bb base64 -d > /etc/ssh/ssh_host_ed25519_key) || exit 1
printf '%s\\n' "$host_key_pub" > /etc/ssh/ssh_host_ed25519_key.pub
if [ -n "$authorized_key" ]; then
  printf '%s\\n' "$authorized_key" > /root/.ssh/authorized_keys && $bb chmod 600 /root/.ssh/authorized_keys
else
  $bb rm -f /root/.ssh/authorized_keys
fi
old_sshd=
{ read -r old_sshd < ${SSHD_PID_FILE}; } 2>/dev/null
[ -n "$old_sshd" ] && kill "$old_sshd" 2>/dev/null
tries=1200
until sshd=; { read -r sshd < ${SSHD_PID_FILE}; } 2>/dev/null; [ -n "$sshd" ] && [ "$sshd" != "$old_sshd" ] && kill -0 "$sshd" 2>/dev/null; do
  tries=$((tries - 1))
  [ "$tries" -gt 0 ] || { echo "sshd did not start again with the new host key: $($bb tail -n 3 ${SSHD_LOG} 2>/dev/null)" >&2; exit 1; }
  $bb sleep 0.1
done`;

/**
 * Makes the guest this machine: its network (MAC and addresses, when it has a NIC), hostname, a
 * new machine-id, a new SSH host key, root's authorized key and /etc/environment, and the host's
 * time (a restored guest's clock stands where the snapshot left it). Run after the first boot and
 * after every restore, so machines started from one snapshot never share an identity or an
 * address. It is one process of the guest kit, `arbor-guest identity` (arbor-guest.c), with
 * `ip -batch` its one child: nothing is done by a shell and its tools. Everything that can be is
 * made on the host, where it costs microseconds: the machine id, the randomness and the SSH host
 * key pair (in-process, newOpenSshHostKey, not an ssh-keygen process), which comes on stdin, never
 * on a command line.
 *
 * sshd is not restarted for the new host key: OpenSSH executes itself anew for each connection and
 * that process reads the key from its file, so the next connection meets the new key (a restart
 * cost most of a second of an emulated guest). It is told to read its settings again only when
 * /etc/environment changed (its SetEnv line), and waited for until it listens again; at a first
 * boot, where it keeps failing until a key exists, the helper waits until it runs.
 *
 * First the kernel's random number generator: a machine restored from memory starts with the
 * snapshot's generator state, exactly like every sibling restored from it, and the kernel reseeds
 * only once a minute; until then all of them draw the same bytes. So the host's randomness is
 * mixed in and the generator reseeded at once.
 *
 * A machine whose kit predates the helper's `identity` (a snapshot taken before it) gets the same
 * identity from the script below, run by the kit's shell.
 */
export async function applyGuestIdentity(
  agent: GuestAgentClient,
  identity: MachineIdentity,
  env: Record<string, string>,
  /** `ip -batch` lines configuring the guest's eth0 (null: a machine without a NIC). */
  networkBatch: string | null,
): Promise<void> {
  const machineId = randomBytes(16).toString('hex');
  const seed = randomBytes(32).toString('hex');
  const hostKey = newOpenSshHostKey(`root@${identity.hostname}`);
  const now = String(BigInt(Date.now()) * 1_000_000n);
  const fields = [seed, hostKey.privateKey, hostKey.publicKey, identity.ssh_authorized_key ?? '', formatEnvironmentFile(env), networkBatch ?? ''];
  // Polled closely for as long as it usually runs under emulation: a machine is ready the moment it ends.
  const quickRounds = 200;
  const result = await runInGuest(
    agent,
    [KIT_PATHS.helper, 'identity', identity.hostname, machineId, now, KIT_PATHS.ip, SSHD_PID_FILE, SSHD_LOG, SSHD_ENVIRONMENT_CONF],
    Buffer.concat(fields.map((field) => Buffer.from(field)).flatMap((field) => [Buffer.from(`${field.length}\n`), field])),
    quickRounds,
  );
  if (result.exit_code === 0) return;
  if (!(result.exit_code === 2 && result.stderr.includes('unknown command'))) {
    throw new Error(`arbor-guest identity exited ${result.exit_code}: ${result.stderr.toString().trim()}`);
  }
  await runInGuestOrFail(
    agent,
    kitShell(APPLY_IDENTITY_SCRIPT, 'arbor-identity', identity.hostname, machineId, identity.ssh_authorized_key ?? '', networkBatch ?? '', now),
    Buffer.from(`${seed}\n${Buffer.from(hostKey.privateKey).toString('base64')}\n${hostKey.publicKey}\n${formatEnvironmentFile(env)}`),
    quickRounds,
  );
}
