import type { HypervisorDriver } from './hypervisor-driver.port';

export interface DriverCandidate {
  name: string;
  create: () => HypervisorDriver;
}

/**
 * HYPERVISOR=auto picks the first candidate (best first) whose probe succeeds on this host and
 * logs why each was taken or passed over; a named driver must work or startup fails with the
 * probe's reason.
 */
export async function selectDriver(
  wanted: 'auto' | string,
  candidates: DriverCandidate[],
  log: (line: string) => void,
): Promise<HypervisorDriver> {
  const pool = wanted === 'auto' ? candidates : candidates.filter((c) => c.name === wanted);
  if (pool.length === 0) throw new Error(`unknown hypervisor driver "${wanted}" (have: ${candidates.map((c) => c.name).join(', ')})`);
  const reasons: string[] = [];
  for (const candidate of pool) {
    const driver = candidate.create();
    const probe = await driver.probe();
    if (probe.ok) {
      log(`hypervisor: using ${driver.name} (${probe.reason})`);
      return driver;
    }
    log(`hypervisor: ${driver.name} unavailable: ${probe.reason}`);
    reasons.push(`${driver.name}: ${probe.reason}`);
  }
  throw new Error(`no usable hypervisor driver: ${reasons.join('; ')}`);
}
