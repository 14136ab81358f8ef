import { closeSync, openSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { readJsonFile, writeJsonAtomic } from '@arbor/durable-files';
import { killAndWait } from '../host/kill-process';
import { isAlive } from '../host/process-identity';
import { GuestAgentClient } from './guest-agent-client';
import type { QemuBaseImage } from './image/qemu-base-image';
import { createOverlay } from './qcow2-chain';
import { qemuArguments, type QemuAccel } from './qemu-command-line';
import { launchQemu } from './qemu-process';

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

export interface AccelSettings {
  /** 'auto' (the default): KVM where a probe VM boots with it, else TCG; 'kvm': KVM or fail. */
  accel?: 'auto' | 'kvm' | 'tcg';
  cacheDir: string;
  /** Where a probe VM's disk and sockets go while it boots. */
  scratchRoot: string;
  /** Builds (or finds) the base image, for a probe VM to boot. */
  baseImage: () => Promise<QemuBaseImage>;
  log: (line: string) => void;
}

/**
 * The accelerator one driver's machines get: decided on first use and kept (a decision that
 * failed, e.g. because the image build failed, is tried again on the next call).
 */
export class AccelDecision {
  private choice: Promise<AccelChoice> | null = null;

  constructor(private readonly settings: AccelSettings) {}

  /** `image` null: not built yet (built only if a KVM boot probe needs it). */
  async get(image: QemuBaseImage | null): Promise<AccelChoice> {
    const { accel, cacheDir, scratchRoot, log } = this.settings;
    if (accel === 'tcg') return { accel: 'tcg', reason: 'TCG (configured)' };
    const needImage = async () => {
      if (image) return image;
      log('qemu: KVM may work here (/dev/kvm opens, the CPU has vmx/svm); building the base image to boot a probe VM');
      return this.settings.baseImage();
    };
    this.choice ??= chooseAccel(needImage, cacheDir, scratchRoot);
    const choice = await this.choice.catch((error) => {
      this.choice = null;
      throw error;
    });
    if (accel === 'kvm' && choice.accel !== 'kvm') throw new Error(`KVM configured but unusable: ${choice.reason}`);
    return choice;
  }
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
  const cached = await readJsonFile<AccelChoice & { boot_id: string }>(cacheFile).catch(() => null);
  if (cached && cached.boot_id === bootId) return { accel: cached.accel, reason: cached.reason };
  const choice = await probeKvm(await image(), scratchRoot);
  await mkdir(join(cacheDir, 'qemu'), { recursive: true });
  await writeJsonAtomic(cacheFile, { ...choice, boot_id: bootId }).catch(() => undefined);
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
      name: 'arbor-kvm-probe', accel: 'kvm', vcpus: 1, memMib: 256, image, disk: paths.disk, kitDisk: image.kit_disk,
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
