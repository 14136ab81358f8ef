export * from './hypervisor-driver.port';
export { SandboxDriver, type SandboxDriverOptions } from './sandbox/sandbox-driver';
export { QemuDriver, type QemuDriverOptions } from './qemu/qemu-driver';
export { InMemoryDriver } from './memory/in-memory-driver';
export { selectDriver, type DriverCandidate } from './select-driver';
