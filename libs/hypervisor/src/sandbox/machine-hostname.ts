import { runCommand } from '../host/run-command';

/**
 * Sets the hostname of a running machine: the host's `hostname` run in the machine's UTS
 * namespace only (nsenter --uts), as host root, which may change a namespace the machine's user
 * namespace owns; guest root, without CAP_SYS_ADMIN, cannot. The runtime sets it at start from the
 * config; this is for a warm machine claimed by a VM (warm-pool.ts).
 */
export async function setMachineHostname(initPid: number, hostname: string): Promise<void> {
  if (!/^[A-Za-z0-9][A-Za-z0-9.-]{0,62}$/.test(hostname)) throw new Error(`invalid hostname ${JSON.stringify(hostname)}`);
  await runCommand('nsenter', [`--target=${initPid}`, '--uts', 'hostname', hostname]);
}
