/**
 * The bare host primitives the drivers are built from, for the benchmarks that compare a driver's
 * operations with them (`@arbor/hypervisor/primitives`; bench/ only).
 */
export { GuestAgentClient } from './qemu/guest-agent-client';
export type { GuestExecStatus } from './qemu/guest-command';
export { readQemuBaseImage, type QemuBaseImage } from './qemu/image/qemu-base-image';
export { DISK_DEVICE, qemuArguments, type QemuAccel } from './qemu/qemu-command-line';
export { launchQemu, type QemuProcess } from './qemu/qemu-process';
export { createOverlay, createOverlayOnFuture } from './qemu/qcow2-chain';
export { QmpClient } from './qemu/qmp-client';
export { killAndWait } from './host/kill-process';
export { isAlive } from './host/process-identity';
export { baseRootfsPath } from './sandbox/base-rootfs';
export { OciRuntime, runtimeUnder } from './sandbox/oci-runtime';
export { MachineFreezer } from './sandbox/machine-freezer';
export { MachineLayout, runtimeOf } from './sandbox/machine-layout';
export { HostNetwork } from './network/host-network';
export { NETWORK_REGISTRY_DIR } from './network/network-leases';
export { busyboxRoot, minbaseRoot } from './images/sample-roots';
