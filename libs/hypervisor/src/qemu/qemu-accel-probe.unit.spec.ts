import { kvmVerdict } from './qemu-accel-probe';

const cpuinfo = (flags: string) => `processor\t: 0\nmodel name\t: Some CPU\nflags\t\t: fpu vme ${flags} sse2\n\n`;

describe('kvmVerdict (the host-only half of the KVM probe)', () => {
  it('rules KVM out without /dev/kvm', () => {
    expect(kvmVerdict(false, cpuinfo('vmx'))).toBe('/dev/kvm not available');
  });

  it('rules KVM out when /dev/kvm opens but the CPU shows no hardware virtualisation (kvm_pvm)', () => {
    expect(kvmVerdict(true, cpuinfo('hypervisor lm'))).toMatch(/no vmx\/svm/);
    expect(kvmVerdict(true, '')).toMatch(/no vmx\/svm/);
  });

  it('leaves the decision to a probe boot when /dev/kvm opens and the CPU has vmx or svm', () => {
    expect(kvmVerdict(true, cpuinfo('vmx ept'))).toBeNull();
    expect(kvmVerdict(true, cpuinfo('svm npt'))).toBeNull();
  });
});
