import { MACHINE_CAPABILITIES } from './container-config';
import { seccompForContainer } from './seccomp-profile';

/** The rules that allow `name` (every rule of Docker's profile allows, except the few errno ones). */
const allowing = (profile: ReturnType<typeof seccompForContainer>, name: string) =>
  profile.syscalls.filter((rule) => rule.names.includes(name) && rule.action === 'SCMP_ACT_ALLOW');

describe('seccompForContainer (Docker’s default profile, resolved as Docker resolves it)', () => {
  const machine = seccompForContainer([...MACHINE_CAPABILITIES], 'x64', '6.18.44-fc');

  it('refuses what is not listed with EPERM, on the native architecture and its 32-bit ones', () => {
    expect(machine.defaultAction).toBe('SCMP_ACT_ERRNO');
    expect(machine.architectures).toEqual(['SCMP_ARCH_X86_64', 'SCMP_ARCH_X86', 'SCMP_ARCH_X32']);
  });

  it('leaves out what needs a capability machines lack: mount, unshare, setns, bpf, syslog, keyctl', () => {
    for (const name of ['mount', 'umount2', 'unshare', 'setns', 'bpf', 'perf_event_open', 'syslog', 'keyctl', 'init_module', 'reboot']) {
      expect({ name, rules: allowing(machine, name) }).toEqual({ name, rules: [] });
    }
  });

  it('keeps what every container runs, and clone only without namespace flags', () => {
    for (const name of ['read', 'write', 'execve', 'ptrace', 'arch_prctl']) expect(allowing(machine, name).length).toBeGreaterThan(0);
    const clone = allowing(machine, 'clone');
    expect(clone).toHaveLength(1);
    expect(clone[0].args).toEqual([{ index: 0, value: 2114060288, op: 'SCMP_CMP_MASKED_EQ' }]);
    expect(machine.syscalls.find((rule) => rule.names.includes('clone3'))).toMatchObject({ action: 'SCMP_ACT_ERRNO', errnoRet: 38 });
  });

  it('follows the capability set: with CAP_SYS_ADMIN, mount would be allowed (which is why machines never get it)', () => {
    const admin = seccompForContainer([...MACHINE_CAPABILITIES, 'CAP_SYS_ADMIN'], 'x64', '6.18.44-fc');
    expect(allowing(admin, 'mount').length).toBeGreaterThan(0);
  });

  it('drops rules for kernels older than they need', () => {
    expect(allowing(seccompForContainer([...MACHINE_CAPABILITIES], 'x64', '4.4.0'), 'ptrace')).toEqual([]);
  });
});
