import { randomBytes } from 'node:crypto';
import type { MachineIdentity } from '../hypervisor-driver.port';
import { formatEnvironmentFile } from '../guest-environment';
import type { GuestAgentClient } from './guest-agent-client';
import { runInGuestOrFail } from './guest-command';

/**
 * Makes the guest this machine: hostname, a new machine-id, a new SSH host key, root's authorized
 * key and /etc/environment (from stdin). Run after the first boot and after every restore, so
 * machines started from one snapshot never share an identity.
 */
const APPLY_IDENTITY = `hostname=$1 machine_id=$2 authorized_key=$3
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
fi`;

export async function applyGuestIdentity(
  agent: GuestAgentClient,
  identity: MachineIdentity,
  env: Record<string, string>,
): Promise<void> {
  const machineId = randomBytes(16).toString('hex');
  await runInGuestOrFail(
    agent,
    ['/bin/sh', '-c', APPLY_IDENTITY, 'arbor-identity', identity.hostname, machineId, identity.ssh_authorized_key ?? ''],
    Buffer.from(formatEnvironmentFile(env)),
  );
}

/** Sets the guest clock from the host's (a restored guest's clock stands where the snapshot left it). */
export async function setGuestClock(agent: GuestAgentClient): Promise<void> {
  await agent.request('guest-set-time', { time: Date.now() * 1_000_000 });
}
