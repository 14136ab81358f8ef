export * from './hypervisor-driver.contract';
export * from './guest-probes';
export * from './host-processes';
export * from './machine-specs';
export * from './escape-attacks';
export * from './escape.contract';
export * from './image.contract';
export * from '../images/sample-roots';
