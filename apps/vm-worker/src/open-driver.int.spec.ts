import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@arbor/application';
import { kvmUnavailableReason } from '@arbor/hypervisor';
import { openDriver } from './open-driver';
import { describeUnless, rootReason } from '../../../test/support/skip-unless';

/**
 * HYPERVISOR=auto with the real drivers on this host. Where the host rules KVM out (as here:
 * kvm_pvm without vmx/svm) qemu is passed over with that reason and the sandbox is taken (it needs
 * root, as CI runs); the qemu probe decides without building or booting anything.
 */
const kvmRuledOut = kvmUnavailableReason();
const skipReason = kvmRuledOut === null ? 'KVM may boot guests on this host: HYPERVISOR=auto would take qemu (its own specs cover it)' : rootReason;

describeUnless(skipReason)('openDriver (HYPERVISOR=auto on this host)', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'arbor-open-driver-'));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('passes over qemu under TCG, saying why, and picks the sandbox', async () => {
    const lines: string[] = [];
    const config = loadConfig({ ...process.env, HYPERVISOR: 'auto', ARBOR_DATA_DIR: dataDir });
    const driver = await openDriver(config, (line) => lines.push(line));
    expect(driver.name).toBe('sandbox');
    expect(lines).toEqual([
      expect.stringMatching(/^hypervisor: qemu works but is not preferred here \(TCG .*\); set HYPERVISOR=qemu to use it$/),
      expect.stringMatching(/^hypervisor: using sandbox \(/),
    ]);
    expect(lines[0]).toContain(kvmRuledOut);
  });

  it('runs sandbox machines under crun by default where crun runs, and under runc when asked (ARBOR_SANDBOX_RUNTIME)', async () => {
    const opened = async (runtime?: string) => {
      const lines: string[] = [];
      await openDriver(loadConfig({ ...process.env, HYPERVISOR: 'sandbox', ARBOR_DATA_DIR: dataDir, ARBOR_SANDBOX_RUNTIME: runtime }), (line) => lines.push(line));
      return lines;
    };
    expect(await opened()).toEqual([expect.stringMatching(/^hypervisor: using sandbox \(crun version [\w.+~]+ \(crun preferred.*\): user namespaces/)]);
    expect(await opened('runc')).toEqual([expect.stringMatching(/^hypervisor: using sandbox \(runc version [\w.+~]+ \(ARBOR_SANDBOX_RUNTIME=runc\): user namespaces/)]);
    expect(() => loadConfig({ ARBOR_SANDBOX_RUNTIME: 'kata' })).toThrow('ARBOR_SANDBOX_RUNTIME must be auto, crun or runc (got "kata")');
  });

  it('takes qemu when asked by name, TCG or not', async () => {
    const lines: string[] = [];
    const driver = await openDriver(loadConfig({ ...process.env, HYPERVISOR: 'qemu', ARBOR_DATA_DIR: dataDir }), (line) => lines.push(line));
    expect(driver.name).toBe('qemu');
    expect(lines).toEqual([expect.stringMatching(/^hypervisor: using qemu \(TCG /)]);
  });
});
