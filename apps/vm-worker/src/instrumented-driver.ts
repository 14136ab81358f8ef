import type { HypervisorDriver } from '@arbor/hypervisor';
import { driverOperationDuration, timed } from '@arbor/observability';

/** The port's operations, timed on /metrics (`arbor_driver_operation_duration_seconds`); a bounded set of labels. */
const OPERATIONS = new Set<string>([
  'probe', 'prepare', 'close', 'create', 'destroy', 'pause', 'resume', 'status', 'list', 'exec', 'readFile', 'writeFile',
  'commit', 'startFromSnapshot', 'resizeDisk', 'getSnapshot', 'listSnapshots', 'deleteSnapshot', 'buildImage', 'getImage', 'deleteImage',
] satisfies (keyof HypervisorDriver)[]);

/**
 * The driver with each call of the port timed by driver, operation and result: a decorator over
 * any driver, so no driver is edited to be measured. Everything else passes through untouched.
 */
export function instrumentDriver(driver: HypervisorDriver): HypervisorDriver {
  return new Proxy(driver, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string' || !OPERATIONS.has(property)) return value;
      const labels = { driver: target.name, operation: property };
      return (...args: unknown[]) => timed(driverOperationDuration, labels, () => Promise.resolve(value.apply(target, args)));
    },
  });
}
