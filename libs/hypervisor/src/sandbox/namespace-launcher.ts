import { spawn } from 'node:child_process';
import { open, readFile } from 'node:fs/promises';
import { DEFAULT_EXEC_ENV } from '../guest-environment';
import { childrenOf, identify, type ProcessIdentity } from '../host/process-identity';
import { inCgroups } from './enter-cgroups';

/**
 * Runs as PID 1 of the new namespaces with the host's tools, before entering the machine's root:
 * mounts the machine's own /proc (of its PID namespace) and /dev/shm (its IPC), sets its hostname,
 * then makes the machine's root the namespace's root. `pivot_root . .` stacks the old root on top
 * and `umount -l .` drops it with every host mount the namespace copied at unshare time: other
 * machines' disks among them, which would otherwise stay mounted (and their loop devices attached)
 * for as long as this machine lives. The overlay keeps its own references to its layers.
 */
const SETUP_SCRIPT = [
  'set -e',
  'root="$1"; name="$2"; init="$3"',
  'mount -t proc -o nosuid,nodev,noexec proc "$root/proc"',
  'mount -t tmpfs -o nosuid,nodev,mode=1777 shm "$root/dev/shm"',
  'echo "$name" > /proc/sys/kernel/hostname',
  'cd "$root"',
  'pivot_root . .',
  'umount -l .',
  'exec /bin/sh -c "$init"',
].join('\n');

/**
 * The machine's init (PID 1, inside its root): says "ready" on fd 3, then stays alive and reaps
 * orphans (`wait` collects any child, including processes re-parented to PID 1).
 */
const INIT_SCRIPT = 'echo ready >&3; exec 3>&-; while :; do sleep 3600 & wait; done';

export interface LaunchOptions {
  root: string;
  hostname: string;
  cgroupProcsFiles: string[];
  logFile: string;
}

/**
 * Starts the machine: a detached (own session, survives the worker) `unshare` into new mount, PID,
 * UTS and IPC namespaces, whose forked child becomes the machine's init. Resolves with the init's
 * host PID and start time once the init runs inside the machine's root.
 */
export async function launchNamespaceInit(options: LaunchOptions): Promise<ProcessIdentity> {
  const log = await open(options.logFile, 'a');
  const unshare = ['unshare', '--mount', '--pid', '--uts', '--ipc', '--fork', '--propagation', 'private'];
  const argv = inCgroups(options.cgroupProcsFiles, [
    ...unshare,
    'sh', '-c', SETUP_SCRIPT, 'sh', options.root, options.hostname, INIT_SCRIPT,
  ]);
  const child = spawn(argv[0], argv.slice(1), {
    detached: true,
    stdio: ['ignore', log.fd, log.fd, 'pipe'],
    env: { PATH: DEFAULT_EXEC_ENV.PATH },
  });
  await log.close();
  const readyPipe = child.stdio[3]!;
  const exitedEarly = async (code: number | null, signal: string | null) => {
    const output = await readFile(options.logFile, 'utf8').catch(() => '');
    throw new Error(`sandbox init exited (${signal ?? code}) before it was ready: ${output.trim()}`);
  };
  let onExit: (code: number | null, signal: string | null) => void = () => undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      readyPipe.once('data', () => resolve());
      child.once('error', reject);
      onExit = (code, signal) => void exitedEarly(code, signal).catch(reject);
      child.once('exit', onExit);
    });
  } finally {
    child.off('exit', onExit);
    readyPipe.destroy();
    child.unref(); // the machine outlives this process; Node still reaps it if it exits first
  }
  // `sh` exec'd into unshare (same PID); unshare's only child is the machine's PID 1.
  const [initPid] = await childrenOf(child.pid!);
  const identity = initPid === undefined ? null : await identify(initPid);
  if (!identity) throw new Error(`sandbox init of ${options.hostname} vanished right after starting`);
  return identity;
}
