export * from './hypervisor-driver.port';
export { SandboxDriver, type SandboxDriverOptions } from './sandbox/sandbox-driver';
export { QemuDriver, type QemuDriverOptions } from './qemu/qemu-driver';
export { chooseAccel, kvmUnavailableReason, type AccelChoice } from './qemu/qemu-accel-probe';
export { InMemoryDriver } from './memory/in-memory-driver';
export { selectDriver, type DriverCandidate } from './select-driver';
export { DEFAULT_NETWORK_SETTINGS, type NetworkSettings } from './network/network-settings';
export { imageSizeMib } from './images/image-size';
export { treeSize } from './host/tree-size';
