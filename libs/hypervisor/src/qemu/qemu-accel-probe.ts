import { closeSync, openSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GuestAgentClient } from './guest-agent-client';
import type { QemuBaseImage } from './image/qemu-base-image';
import { qemuArguments, type QemuAccel } from './qemu-command-line';
import { killAndWait, launchQemu } from './qemu-process';
import { createOverlay } from './qcow2-chain';
import { isAlive } from '../sandbox/process-identity';

export interface AccelChoice {
  accel: QemuAccel;
  reason: string;
}

const TCG_FLAGS = 'TCG (-M q35 -accel tcg,tb-size=64 -cpu max)';
/** A KVM guest reaches its agent in 1-2 s; a broken KVM (e.g. kvm_pvm) stalls instead. */
const KVM_PROBE_TIMEOUT_MS = 20_000;

/**
 * Why KVM cannot run a guest here, from the host alone (no image, no boot), or null when it
 * might: /dev/kvm must open read-write and the CPU must show hardware virtualisation (vmx or
 * svm). This host's kvm_pvm has a /dev/kvm that opens without either, and a stock kernel does not
 * boot on it.
 */
export function kvmUnavailableReason(): string | null {
  let deviceOpens = true;
  try {
    closeSync(openSync('/dev/kvm', 'r+'));
  } catch {
    deviceOpens = false;
  }
  return kvmVerdict(deviceOpens, readFileSync('/proc/cpuinfo', 'utf8'));
}

/** kvmUnavailableReason's decision, given whether /dev/kvm opens and /proc/cpuinfo. */
export function kvmVerdict(deviceOpens: boolean, cpuinfo: string): string | null {
  if (!deviceOpens) return '/dev/kvm not available';
  const flags = new Set((/^flags\s*:(.*)$/m.exec(cpuinfo)?.[1] ?? '').trim().split(/\s+/));
  if (!flags.has('vmx') && !flags.has('svm')) return '/dev/kvm opens, but the CPU shows no vmx/svm (hardware virtualisation)';
  return null;
}

/** The TCG choice when kvmUnavailableReason already says no. */
export function tcgBecause(reason: string): AccelChoice {
  return { accel: 'tcg', reason: `${TCG_FLAGS}: ${reason}` };
}

/**
 * KVM only if the host allows it (kvmUnavailableReason) and a probe VM really boots to its guest
 * agent with -accel kvm: a /dev/kvm that opens is not enough. The image is asked for only when a
 * boot is needed; a boot's answer is kept in `<cacheDir>/qemu/accel-probe.json` for the current
 * host boot.
 */
export async function chooseAccel(image: () => Promise<QemuBaseImage>, cacheDir: string, scratchRoot: string): Promise<AccelChoice> {
  const why = kvmUnavailableReason();
  if (why) return tcgBecause(why);
  const bootId = (await readFile('/proc/sys/kernel/random/boot_id', 'utf8')).trim();
  const cacheFile = join(cacheDir, 'qemu', 'accel-probe.json');
  const cached = JSON.parse(await readFile(cacheFile, 'utf8').catch(() => 'null')) as (AccelChoice & { boot_id: string }) | null;
  if (cached && cached.boot_id === bootId) return { accel: cached.accel, reason: cached.reason };
  const choice = await probeKvm(await image(), scratchRoot);
  await mkdir(join(cacheDir, 'qemu'), { recursive: true });
  await writeFile(cacheFile, `${JSON.stringify({ ...choice, boot_id: bootId }, null, 2)}\n`).catch(() => undefined);
  return choice;
}

async function probeKvm(image: QemuBaseImage, scratchRoot: string): Promise<AccelChoice> {
  await mkdir(scratchRoot, { recursive: true });
  const dir = await mkdtemp(join(scratchRoot, 'kvm-probe-'));
  const paths = { disk: join(dir, 'disk.qcow2'), qmp: join(dir, 'qmp.sock'), agent: join(dir, 'agent.sock') };
  let qemu: Awaited<ReturnType<typeof launchQemu>> | null = null;
  const agent = new GuestAgentClient(paths.agent);
  try {
    await createOverlay(paths.disk, image.disk);
    const args = qemuArguments({
      name: 'arbor-kvm-probe', accel: 'kvm', vcpus: 1, memMib: 256, image, disk: paths.disk,
      qmpSocket: paths.qmp, agentSocket: paths.agent, serialLog: join(dir, 'serial.log'),
    });
    qemu = await launchQemu(args, join(dir, 'qemu.log'), paths.qmp);
    const identity = qemu.identity;
    await agent.waitUntilReady(KVM_PROBE_TIMEOUT_MS, () => isAlive(identity));
    return { accel: 'kvm', reason: 'KVM (a probe VM booted to its guest agent with -accel kvm)' };
  } catch (error) {
    const qemuSaid = (await readFile(join(dir, 'qemu.log'), 'utf8').catch(() => '')).trim().split('\n')[0];
    const why = [error instanceof Error ? error.message : String(error), qemuSaid].filter(Boolean).join(': ');
    return tcgBecause(`/dev/kvm is present but a probe VM did not boot with it (${why})`);
  } finally {
    agent.close();
    if (qemu) await killAndWait(qemu.identity, qemu.exited);
    await rm(dir, { recursive: true, force: true });
  }
}
