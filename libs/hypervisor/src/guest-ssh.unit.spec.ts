import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { guestServicesInit, serviceSupervisor } from './guest-ssh';
import { GUEST_INIT } from './qemu/image/guest-init-scripts';

describe('the guest init that keeps sshd (and qemu-ga) running', () => {
  it('is valid shell and perl, with arguments quoted through both', () => {
    const init = guestServicesInit([['/bin/echo', "it's", 'a b'], ['/usr/sbin/sshd', '-D']]);
    expect(() => execFileSync('sh', ['-n', '-c', init])).not.toThrow();
    expect(() => execFileSync('sh', ['-n', '-c', GUEST_INIT])).not.toThrow();
    expect(() => execFileSync('perl', ['-c', '-e', serviceSupervisor([['/bin/echo', "it's"]])], { stdio: 'pipe' })).not.toThrow();
    expect(GUEST_INIT).toContain('--path=/dev/virtio-ports/org.qemu.guest_agent.0');
  });

  it('starts each service again after it exits, with its arguments intact', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'arbor-supervisor-'));
    try {
      const log = join(dir, 'starts');
      writeFileSync(join(dir, 'service'), `#!/bin/sh\necho "$1" >> ${log}\n`, { mode: 0o755 });
      const supervisor = spawn('perl', ['-e', serviceSupervisor([[join(dir, 'service'), "it's here"]])], { stdio: 'ignore' });
      await new Promise((resolve) => setTimeout(resolve, 1800));
      supervisor.kill('SIGKILL');
      const starts = execFileSync('cat', [log], { encoding: 'utf8' }).trim().split('\n');
      expect(starts.length).toBeGreaterThanOrEqual(3); // started, then again every half second
      expect(new Set(starts)).toEqual(new Set(["it's here"]));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
