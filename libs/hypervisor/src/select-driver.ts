import type { DriverProbe, HypervisorDriver } from './hypervisor-driver.port';

/** All selection needs of a driver: its name and its probe. */
export type ProbedDriver = Pick<HypervisorDriver, 'name' | 'probe'>;

export interface DriverCandidate<T extends ProbedDriver = HypervisorDriver> {
  name: string;
  create: () => T;
}

/**
 * HYPERVISOR=auto picks the first candidate (best first) whose probe succeeds and recommends it,
 * else the first that works at all, and logs why each was taken or passed over; a named driver
 * must work (recommended or not) or startup fails with the probe's reason. A probe that throws
 * counts as "does not work here".
 */
export async function selectDriver<T extends ProbedDriver>(
  wanted: 'auto' | string,
  candidates: DriverCandidate<T>[],
  log: (line: string) => void,
): Promise<T> {
  const pool = wanted === 'auto' ? candidates : candidates.filter((c) => c.name === wanted);
  if (pool.length === 0) {
    throw new Error(`unknown hypervisor driver HYPERVISOR=${wanted} (use auto, ${candidates.map((c) => c.name).join(', ')})`);
  }
  const reasons: string[] = [];
  let fallback: { driver: T; probe: DriverProbe } | null = null;
  for (const candidate of pool) {
    const driver = candidate.create();
    const probe = await driver.probe().catch(
      (error: unknown): DriverProbe => ({ ok: false, reason: `probe failed: ${error instanceof Error ? error.message : String(error)}` }),
    );
    if (probe.ok && (probe.recommended !== false || wanted !== 'auto')) {
      log(`hypervisor: using ${driver.name} (${probe.reason})`);
      return driver;
    }
    if (probe.ok) {
      log(`hypervisor: ${driver.name} works but is not preferred here (${probe.reason}); set HYPERVISOR=${driver.name} to use it`);
      fallback ??= { driver, probe };
      continue;
    }
    log(`hypervisor: ${driver.name} unavailable: ${probe.reason}`);
    reasons.push(`${driver.name}: ${probe.reason}`);
  }
  if (fallback) {
    log(`hypervisor: using ${fallback.driver.name}, as no preferred driver works here (${fallback.probe.reason})`);
    return fallback.driver;
  }
  if (wanted !== 'auto') throw new Error(`HYPERVISOR=${wanted}, but the ${wanted} driver cannot run here: ${reasons.join('; ')}`);
  throw new Error(`no hypervisor driver can run here: ${reasons.join('; ')}`);
}
