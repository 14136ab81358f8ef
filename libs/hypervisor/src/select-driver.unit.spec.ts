import type { DriverProbe } from './hypervisor-driver.port';
import { selectDriver, type DriverCandidate, type ProbedDriver } from './select-driver';

/** A candidate whose probe gives a fixed answer (or throws), counting how often it was created. */
function candidate(name: string, answer: DriverProbe | Error): DriverCandidate<ProbedDriver> & { created: number } {
  const entry = {
    name,
    created: 0,
    create: () => {
      entry.created++;
      return { name, probe: async () => (answer instanceof Error ? Promise.reject(answer) : answer) };
    },
  };
  return entry;
}

async function select(wanted: string, candidates: DriverCandidate<ProbedDriver>[]) {
  const lines: string[] = [];
  const driver = await selectDriver(wanted, candidates, (line) => lines.push(line));
  return { name: driver.name, lines };
}

const kvm = { ok: true, reason: 'KVM (a probe VM booted)', recommended: true };
const tcg = { ok: true, reason: 'TCG: /dev/kvm not available', recommended: false };
const namespaces = { ok: true, reason: 'namespaces + overlayfs available' };
const notRoot = { ok: false, reason: 'needs root' };

describe('selectDriver', () => {
  it('auto takes the first recommended candidate and probes no further', async () => {
    const later = candidate('sandbox', namespaces);
    expect(await select('auto', [candidate('qemu', kvm), later])).toEqual({
      name: 'qemu',
      lines: ['hypervisor: using qemu (KVM (a probe VM booted))'],
    });
    expect(later.created).toBe(0);
  });

  it('auto passes over a candidate that works but is not recommended, saying how to force it', async () => {
    expect(await select('auto', [candidate('qemu', tcg), candidate('sandbox', namespaces)])).toEqual({
      name: 'sandbox',
      lines: [
        'hypervisor: qemu works but is not preferred here (TCG: /dev/kvm not available); set HYPERVISOR=qemu to use it',
        'hypervisor: using sandbox (namespaces + overlayfs available)',
      ],
    });
  });

  it('auto falls back to a working but not recommended candidate when nothing better works', async () => {
    expect(await select('auto', [candidate('qemu', tcg), candidate('sandbox', notRoot)])).toEqual({
      name: 'qemu',
      lines: [
        'hypervisor: qemu works but is not preferred here (TCG: /dev/kvm not available); set HYPERVISOR=qemu to use it',
        'hypervisor: sandbox unavailable: needs root',
        'hypervisor: using qemu, as no preferred driver works here (TCG: /dev/kvm not available)',
      ],
    });
  });

  it('auto skips a candidate whose probe throws, and fails with every reason when none works', async () => {
    const lines: string[] = [];
    const failing = [candidate('qemu', new Error('qemu-img crashed')), candidate('sandbox', notRoot)];
    await expect(selectDriver('auto', failing, (line) => lines.push(line))).rejects.toThrow(
      'no hypervisor driver can run here: qemu: probe failed: qemu-img crashed; sandbox: needs root',
    );
    expect(lines).toEqual(['hypervisor: qemu unavailable: probe failed: qemu-img crashed', 'hypervisor: sandbox unavailable: needs root']);
  });

  it('a named driver is used when it works, recommended or not, and no other is probed', async () => {
    const sandbox = candidate('sandbox', namespaces);
    expect(await select('qemu', [candidate('qemu', tcg), sandbox])).toEqual({
      name: 'qemu',
      lines: ['hypervisor: using qemu (TCG: /dev/kvm not available)'],
    });
    expect(sandbox.created).toBe(0);
  });

  it('a named driver that cannot run fails startup with its reason, without falling back', async () => {
    const qemu = candidate('qemu', kvm);
    await expect(select('sandbox', [qemu, candidate('sandbox', notRoot)])).rejects.toThrow(
      'HYPERVISOR=sandbox, but the sandbox driver cannot run here: sandbox: needs root',
    );
    expect(qemu.created).toBe(0);
  });

  it('an unknown name fails with the names it could have been', async () => {
    await expect(select('firecracker', [candidate('qemu', kvm), candidate('sandbox', namespaces)])).rejects.toThrow(
      'unknown hypervisor driver HYPERVISOR=firecracker (use auto, qemu, sandbox)',
    );
  });
});
