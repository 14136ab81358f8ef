export * from './hypervisor-driver.port';
export { SandboxDriver, type SandboxDriverOptions } from './sandbox/sandbox-driver';
