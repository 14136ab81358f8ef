import { execFileSync, spawn } from 'node:child_process';
import { hostname } from 'node:os';
import { readlinkSync } from 'node:fs';
import { setMachineHostname } from './machine-hostname';
import { describeUnless, rootReason } from '../../../../test/support/skip-unless';

describeUnless(rootReason)('setMachineHostname', () => {
  it("sets the hostname in a machine's UTS namespace, and refuses the host's own", async () => {
    const machine = spawn('unshare', ['--uts', 'sleep', '60'], { stdio: 'ignore' });
    try {
      const pid = machine.pid!;
      for (let i = 0; i < 200 && readlinkSync(`/proc/${pid}/ns/uts`) === readlinkSync('/proc/self/ns/uts'); i++) await new Promise((r) => setTimeout(r, 10));
      await setMachineHostname(pid, 'vm-hostname-test');
      expect(execFileSync('nsenter', [`--target=${pid}`, '--uts', 'hostname'], { encoding: 'utf8' }).trim()).toBe('vm-hostname-test');
      const host = hostname();
      await expect(setMachineHostname(process.pid, 'not-the-host')).rejects.toThrow("in the host's own UTS namespace");
      expect(hostname()).toBe(host);
    } finally {
      machine.kill('SIGKILL');
    }
  });
});
