import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@arbor/application';
import type { HypervisorDriver, MachineSpec } from '@arbor/hypervisor';
import { busyboxRoot, minbaseRoot } from '@arbor/hypervisor/primitives';
import { createQemuDriver, createSandboxDriver } from '../apps/vm-worker/src/open-driver';
import type { DriverKind } from './drivers.bench';
import { percentile, report, spreadOf, timed } from './stats';

/** The goal the issue sets: a VM of a custom image is up no slower than 1.2× one of the default. */
const GOAL = 1.2;

/**
 * new_root from a custom image vs from the default, through the driver (what new_root waits for:
 * create, then the first exec answered). Two custom images: the Debian minbase root the default is
 * made from (the same files, so the difference is the image path alone), and a bare busybox-static
 * root (no libc, no shell of its own). Rounds alternate default and custom, one machine at a time,
 * so a noisy neighbour hurts them alike. Also what building each image took.
 */
export async function benchImageNewRoot(kind: DriverKind, rounds: number): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'arbor-bench-img-'));
  const config = { dataDir, cacheDir: loadConfig(process.env).cacheDir };
  const driver: HypervisorDriver = kind === 'sandbox' ? createSandboxDriver(config) : createQemuDriver(config);
  try {
    const probe = await driver.probe();
    if (!probe.ok) {
      console.log(`${kind} image benchmarks SKIPPED: the driver's probe failed here (${probe.reason})`);
      return;
    }
    await driver.prepare();
    const images: { name: string; image_id: string; buildMs: number; sizeMib: number }[] = [];
    for (const [name, make] of [
      ['Debian minbase', (dir: string) => minbaseRoot(dir, config.cacheDir)],
      ['busybox-static', (dir: string) => busyboxRoot(dir)],
    ] as const) {
      const root = join(dataDir, `root-${randomUUID()}`);
      await make(root);
      const [image, buildMs] = await timed(() => driver.buildImage({ image_id: randomUUID(), rootfs_dir: root, extra_size_mib: 256 }));
      rmSync(root, { recursive: true, force: true });
      images.push({ name, image_id: image.image_id, buildMs, sizeMib: image.size_mib });
    }
    const samples: Record<string, number[]> = { default: [], ...Object.fromEntries(images.map((image) => [image.name, []])) };
    for (let round = 0; round < rounds; round++) {
      for (const target of [null, ...images]) {
        const spec = machineSpec(target?.image_id ?? null);
        const [, ms] = await timed(async () => {
          await driver.create(spec);
          const { exit_code } = await driver.exec(spec.vm_id, { argv: ['true'] }, () => undefined);
          if (exit_code !== 0) throw new Error(`true exited ${exit_code}`);
        });
        samples[target?.name ?? 'default'].push(ms);
        await driver.destroy(spec.vm_id);
      }
    }
    const base = percentile(samples.default, 50);
    console.log(`${kind}: new_root from a custom image vs from the default (create → first exec answered; goal ≤ ${GOAL}×)`);
    report([
      ['default image', spreadOf(samples.default)],
      ...images.map(({ name, buildMs, sizeMib }): [string, string] => {
        const ratio = percentile(samples[name], 50) / base;
        return [
          `${name} image`,
          `${spreadOf(samples[name])}  ratio ${ratio.toFixed(2)}×${ratio > GOAL ? ' (over the goal)' : ''}  (built in ${(buildMs / 1000).toFixed(1)} s, ${sizeMib} MiB disk)`,
        ];
      }),
    ]);
    for (const { image_id } of images) await driver.deleteImage(image_id);
  } finally {
    for (const machine of await driver.list().catch(() => [])) await driver.destroy(machine.vm_id).catch(() => undefined);
    await driver.close?.();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function machineSpec(image_id: string | null): MachineSpec {
  const vm_id = randomUUID();
  return {
    vm_id,
    vcpu_count: 1,
    mem_size_mib: 256,
    fs_size_mib: 1024,
    image_name: image_id ? 'bench-image' : 'default',
    image_id,
    env: {},
    identity: { hostname: `bench-${vm_id.slice(0, 8)}`, ssh_authorized_key: null },
    network_group: 'bench',
  };
}
