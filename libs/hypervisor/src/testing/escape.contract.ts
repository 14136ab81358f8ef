import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GuestFileError, type HypervisorDriver } from '../hypervisor-driver.port';
import { ESCAPE_ATTACKS, type EscapeBoundary, type EscapeTarget } from './escape-attacks';
import { execCollect, stdoutOf } from './guest-probes';
import { machineSpec } from './machine-specs';

/** What the escape suite needs to know of a driver. */
export interface EscapeContractHooks {
  /** See EscapeBoundary: which of the attacks apply. */
  boundary: EscapeBoundary;
  /** The host file that holds a guest file of the machine's writable layer (shared-kernel drivers). */
  hostPathOf?: (vmId: string, guestPath: string) => string;
}

/**
 * A private host directory holding a secret file, standing for the data directory and its admin
 * key: what an escape would be after. Removed by `remove`.
 */
export function makeHostSecret(): EscapeTarget['hostSecret'] & { remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'arbor-escape-'));
  const path = join(dir, 'admin-api-key');
  const value = randomBytes(32).toString('hex');
  writeFileSync(path, value, { mode: 0o600 });
  return { dir, path, value, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * From inside a machine, through the driver's exec, each attack on the host (ESCAPE_ATTACKS) in
 * a harmless form, asserting the exact failure; and the driver's own bounds: reads of a giant
 * file and endless output. One machine for the whole suite: qemu boots cost seconds under TCG.
 */
export function describeEscapeContract(driverName: string, open: () => Promise<HypervisorDriver>, hooks: EscapeContractHooks): void {
  describe(`escape attempts from a machine: ${driverName}`, () => {
    let driver: HypervisorDriver;
    const spec = machineSpec();
    const vm = spec.vm_id;
    // Made when the suite runs (a filtered-out suite runs no afterAll to remove it).
    let hostSecret: ReturnType<typeof makeHostSecret> | undefined;
    const target: EscapeTarget = {
      async run(argv) {
        const result = await execCollect(driver, vm, { argv, timeout_secs: 60 });
        return { exit: result.exit_code, out: result.stdout.toString(), err: result.stderr.toString().trim() };
      },
      get hostSecret() {
        return hostSecret!;
      },
      hostPathOf: hooks.hostPathOf && ((guestPath) => hooks.hostPathOf!(vm, guestPath)),
    };

    beforeAll(async () => {
      hostSecret = makeHostSecret();
      driver = await open();
      await driver.prepare();
      await driver.create(spec);
    }, 15 * 60_000);

    afterAll(async () => {
      await driver?.destroy(vm);
      hostSecret?.remove();
    }, 5 * 60_000);

    for (const attack of ESCAPE_ATTACKS.filter((a) => a.boundaries.includes(hooks.boundary))) {
      it(attack.name, () => attack.attempt(target));
    }

    it('keeps reads of a giant file bounded: a sparse 1 TiB file and /dev/zero stop at the cap', async () => {
      await stdoutOf(driver, vm, { argv: ['sh', '-c', 'truncate -s 1T /root/huge && head -c 65536 /dev/zero > /root/exact'] });
      const cap = 65536;
      expect((await driver.readFile(vm, '/root/exact', { max_bytes: cap })).length).toBe(cap);
      for (const [path, max_bytes] of [['/root/exact', cap - 1], ['/root/huge', 8 * 1024 * 1024]] as const) {
        const refused = await driver.readFile(vm, path, { max_bytes }).catch((error: unknown) => error);
        expect(refused).toBeInstanceOf(GuestFileError);
        expect(refused).toMatchObject({ path, reason: 'too_large' });
      }
      // A device is no regular file (refused as such) or, read as one, is cut at the cap.
      const zero = await driver.readFile(vm, '/dev/zero', { max_bytes: cap }).catch((error: unknown) => error);
      expect(zero).toBeInstanceOf(GuestFileError);
      expect(['too_large', 'not_a_file']).toContain((zero as GuestFileError).reason);
    }, 120_000);

    it('ends endless output at the exec timeout', async () => {
      let bytes = 0;
      const { exit_code } = await driver.exec(vm, { argv: ['yes'], timeout_secs: 2 }, (chunk) => (bytes += chunk.data.length));
      expect(exit_code).toBe(124);
      expect(bytes).toBeGreaterThan(0);
    }, 120_000);
  });
}
