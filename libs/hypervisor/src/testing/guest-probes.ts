import { randomUUID } from 'node:crypto';
import type { ExecChunk, ExecSpec, HypervisorDriver } from '../hypervisor-driver.port';
import { sleep } from '../host/sleep';

/** What one exec produced: the chunks as delivered, and each stream's bytes joined. */
export interface CollectedExec {
  exit_code: number;
  chunks: ExecChunk[];
  stdout: Buffer;
  stderr: Buffer;
}

export async function execCollect(
  driver: HypervisorDriver,
  vmId: string,
  spec: ExecSpec,
  onChunk?: (chunk: ExecChunk) => void,
): Promise<CollectedExec> {
  const chunks: ExecChunk[] = [];
  const { exit_code } = await driver.exec(vmId, spec, (chunk) => {
    chunks.push(chunk);
    onChunk?.(chunk);
  });
  const joined = (stream: ExecChunk['stream']) => Buffer.concat(chunks.filter((c) => c.stream === stream).map((c) => c.data));
  return { exit_code, chunks, stdout: joined('stdout'), stderr: joined('stderr') };
}

/** stdout of a command that must succeed. */
export async function stdoutOf(driver: HypervisorDriver, vmId: string, spec: ExecSpec): Promise<string> {
  const result = await execCollect(driver, vmId, spec);
  if (result.exit_code !== 0) {
    throw new Error(`${spec.argv.join(' ')} exited ${result.exit_code}: ${result.stderr.toString()}`);
  }
  return result.stdout.toString();
}

/** Polls `read` until `accept` holds; fails with the last value after `attempts` tries. */
export async function eventually<T>(read: () => Promise<T>, accept: (value: T) => boolean, attempts = 100): Promise<T> {
  let value = await read();
  for (let attempt = 1; attempt < attempts && !accept(value); attempt++) {
    await sleep(100);
    value = await read();
  }
  if (!accept(value)) throw new Error(`condition not reached; last value: ${JSON.stringify(value)}`);
  return value;
}

/** Which of `paths` exist in the machine, in one exec (execs cost ~80 ms on a TCG guest). */
export async function existing(driver: HypervisorDriver, vmId: string, paths: string[]): Promise<string[]> {
  const out = await stdoutOf(driver, vmId, {
    argv: ['sh', '-c', 'for p in "$@"; do [ -e "$p" ] && echo "$p"; done; true', 'sh', ...paths],
  });
  return out.split('\n').filter(Boolean);
}

/** Who the machine says it is, read in one exec. */
export interface GuestIdentity {
  /** How far the guest's clock (`date +%s`) was outside the host's while the exec ran, in seconds. */
  clockSkewSecs: number;
  unameHostname: string;
  etcHostname: string;
  machineId: string;
  hostKeyFirstLine: string;
  hostKeyMode: string;
  hostKeyPub: string;
  authorizedKeys: string;
  environment: string;
}

const SECTION = '--arbor-section--';
const IDENTITY_SCRIPT = [
  'uname -n',
  'cat /etc/hostname',
  'cat /etc/machine-id',
  'head -n 1 /etc/ssh/ssh_host_ed25519_key',
  'stat -c %a /etc/ssh/ssh_host_ed25519_key',
  'cat /etc/ssh/ssh_host_ed25519_key.pub',
  'cat /root/.ssh/authorized_keys',
  'cat /etc/environment',
  'date +%s',
]
  .map((command) => `${command} 2>&1; echo ${SECTION}`)
  .join('\n');

export async function identityOf(driver: HypervisorDriver, vmId: string): Promise<GuestIdentity> {
  const hostBefore = Math.floor(Date.now() / 1000);
  const sections = (await stdoutOf(driver, vmId, { argv: ['sh', '-c', IDENTITY_SCRIPT] })).split(`${SECTION}\n`);
  const hostAfter = Math.ceil(Date.now() / 1000);
  const [unameHostname, etcHostname, machineId, hostKeyFirstLine, hostKeyMode, hostKeyPub] = sections.map((s) => s.trim());
  const guestSeconds = Number(sections[8].trim());
  return {
    clockSkewSecs: Number.isFinite(guestSeconds) ? Math.max(0, hostBefore - guestSeconds, guestSeconds - hostAfter) : Infinity,
    unameHostname,
    etcHostname,
    machineId,
    hostKeyFirstLine,
    hostKeyMode,
    hostKeyPub,
    authorizedKeys: sections[6],
    environment: sections[7],
  };
}

/**
 * PIDs (in the machine) of processes whose command line holds `marker`. The search pattern wraps
 * the first character in [], so the searching shell and grep never match themselves. A child a
 * marked shell has forked but not yet exec'd (its loop's `sleep`, say) still carries the parent's
 * command line for a moment: a process whose parent is marked too is that child, not another.
 */
export async function processesWithMarker(driver: HypervisorDriver, vmId: string, marker: string): Promise<number[]> {
  const pattern = `[${marker[0]}]${marker.slice(1)}`;
  // Each match as "<pid> <ppid>" (the ppid is the 4th field of /proc/<pid>/stat, after the comm's closing paren).
  const script = `for f in $(grep -l -a -e "$1" /proc/[0-9]*/cmdline 2>/dev/null); do d=\${f%/cmdline}; s=$(cat $d/stat 2>/dev/null) || continue; r=\${s##*) }; set -- "$1" $r; echo "\${d#/proc/} $3"; done; true`;
  const out = await stdoutOf(driver, vmId, { argv: ['sh', '-c', script, 'sh', pattern] });
  const found = out
    .split('\n')
    .map((line) => /^(\d+) (\d+)$/.exec(line))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => ({ pid: Number(match[1]), ppid: Number(match[2]) }));
  const pids = new Set(found.map(({ pid }) => pid));
  return found.filter(({ ppid }) => !pids.has(ppid)).map(({ pid }) => pid);
}

/** Total size of the machine's root filesystem in MiB, as `df` in the guest reports it. */
export async function rootFsSizeMib(driver: HypervisorDriver, vmId: string): Promise<number> {
  const out = await stdoutOf(driver, vmId, { argv: ['df', '-P', '-m', '/'] });
  return Number(out.trim().split('\n')[1].split(/\s+/)[1]);
}

/**
 * A busy loop in the machine that logs each second of host wall-clock time it sees while it runs:
 * read from the RTC where the machine has one (a VM's RTC keeps the host's time while its vCPUs
 * are stopped, unlike its system clock), else from the clock the machine shares with the host.
 * A second missing from the log is a second in which the machine did not run.
 */
export interface RunWitness {
  secondsSeen(): Promise<number[]>;
  stop(): Promise<void>;
}

const WITNESS_SCRIPT = `log=$1
if [ -r /sys/class/rtc/rtc0/since_epoch ]; then now() { read -r t < /sys/class/rtc/rtc0/since_epoch; }
else now() { t=$EPOCHSECONDS; }; fi
last=
while :; do now; if [ "$t" != "$last" ]; then echo "$t" >> "$log"; last=$t; fi; done`;

export async function startRunWitness(driver: HypervisorDriver, vmId: string): Promise<RunWitness> {
  const log = `/tmp/run-witness-${randomUUID()}`;
  const pid = Number(
    (
      await stdoutOf(driver, vmId, {
        argv: ['sh', '-c', 'bash -c "$1" witness "$2" </dev/null >/dev/null 2>&1 & echo $!', 'sh', WITNESS_SCRIPT, log],
      })
    ).trim(),
  );
  const secondsSeen = async () =>
    (await stdoutOf(driver, vmId, { argv: ['sh', '-c', `cat ${log} 2>/dev/null; true`] })).split('\n').filter(Boolean).map(Number);
  await eventually(secondsSeen, (seconds) => seconds.length >= 2);
  return { secondsSeen, stop: async () => void (await stdoutOf(driver, vmId, { argv: ['sh', '-c', `kill ${pid}`] })) };
}
