import { constants } from 'node:fs';
import { access, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
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
 * KVM only if a probe VM really boots to its guest agent with -accel kvm: a /dev/kvm that opens
 * is not enough (kvm_pvm without vmx/svm stalls a stock kernel, then reports an emulation failure).
 * The answer is kept in `<cacheDir>/qemu/accel-probe.json` for the current host boot.
 */
export async function chooseAccel(image: QemuBaseImage, cacheDir: string, scratchRoot: string): Promise<AccelChoice> {
  const bootId = (await readFile('/proc/sys/kernel/random/boot_id', 'utf8')).trim();
  const cacheFile = join(cacheDir, 'qemu', 'accel-probe.json');
  const cached = JSON.parse(await readFile(cacheFile, 'utf8').catch(() => 'null')) as (AccelChoice & { boot_id: string }) | null;
  if (cached && cached.boot_id === bootId) return { accel: cached.accel, reason: cached.reason };
  const choice = await probeKvm(image, scratchRoot);
  await writeFile(cacheFile, `${JSON.stringify({ ...choice, boot_id: bootId }, null, 2)}\n`).catch(() => undefined);
  return choice;
}

async function probeKvm(image: QemuBaseImage, scratchRoot: string): Promise<AccelChoice> {
  try {
    await access('/dev/kvm', constants.R_OK | constants.W_OK);
  } catch {
    return { accel: 'tcg', reason: `${TCG_FLAGS}: /dev/kvm not available` };
  }
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
    return { accel: 'tcg', reason: `${TCG_FLAGS}: /dev/kvm is present but a probe VM did not boot with it (${why})` };
  } finally {
    agent.close();
    if (qemu) await killAndWait(qemu.identity, qemu.exited);
    await rm(dir, { recursive: true, force: true });
  }
}
