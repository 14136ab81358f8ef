import type { HypervisorDriver } from './hypervisor-driver.port';

export interface DriverCandidate {
  name: string;
  create: () => HypervisorDriver;
}

/**
 * HYPERVISOR=auto picks the first candidate (best first) whose probe succeeds and recommends it,
 * else the first that works at all, and logs why each was taken or passed over; a named driver
 * must work or startup fails with the probe's reason.
 */
export async function selectDriver(
  wanted: 'auto' | string,
  candidates: DriverCandidate[],
  log: (line: string) => void,
): Promise<HypervisorDriver> {
  const pool = wanted === 'auto' ? candidates : candidates.filter((c) => c.name === wanted);
  if (pool.length === 0) throw new Error(`unknown hypervisor driver "${wanted}" (have: ${candidates.map((c) => c.name).join(', ')})`);
  const reasons: string[] = [];
  let fallback: HypervisorDriver | null = null;
  for (const candidate of pool) {
    const driver = candidate.create();
    const probe = await driver.probe();
    if (probe.ok && (probe.recommended !== false || wanted !== 'auto')) {
      log(`hypervisor: using ${driver.name} (${probe.reason})`);
      return driver;
    }
    if (probe.ok) {
      log(`hypervisor: ${driver.name} works but is not preferred here (${probe.reason}); set HYPERVISOR=${driver.name} to use it`);
      fallback ??= driver;
      continue;
    }
    log(`hypervisor: ${driver.name} unavailable: ${probe.reason}`);
    reasons.push(`${driver.name}: ${probe.reason}`);
  }
  if (fallback) {
    log(`hypervisor: using ${fallback.name} (no preferred driver works here)`);
    return fallback;
  }
  throw new Error(`no usable hypervisor driver: ${reasons.join('; ')}`);
}
