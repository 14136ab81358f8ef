import { DomainError } from '../shared/domain-error';

/** Which limit said no, with the numbers a client needs to act on it. */
export interface QuotaUse {
  /** `vms`, `vcpus`, `memory_mib`, `disk_mib`, `commit_bytes` (the org's), `vm.<field>` (one VM's), `branch_count`. */
  name: string;
  limit: number;
  /** What is held now (0 for a per-VM or per-request limit). */
  used: number;
  /** What the refused request asked for on top. */
  requested: number;
}

/**
 * A request that would take an org (or one VM, or one request) past a resource limit: 403, as the
 * contract answers "org resource limits exceeded", with a message naming the limit, its value and
 * the current use, and the same figures as data (the error body's `quota`).
 */
export class QuotaExceededError extends DomainError {
  constructor(
    readonly quota: QuotaUse,
    message: string,
  ) {
    super('forbidden', message);
    this.name = 'QuotaExceededError';
  }
}

const MIB = 1024 * 1024;
const GIB = 1024 * MIB;

/** Bytes the way people read them: 512 MiB, 1.5 GiB. */
export function formatBytes(bytes: number): string {
  if (bytes >= GIB) return `${+(bytes / GIB).toFixed(2)} GiB`;
  if (bytes >= MIB) return `${+(bytes / MIB).toFixed(1)} MiB`;
  return `${bytes} bytes`;
}

const UNITS: Record<string, (n: number) => string> = {
  vms: (n) => `${n} VM(s)`,
  vcpus: (n) => `${n} vCPU(s)`,
  memory_mib: (n) => `${n} MiB`,
  disk_mib: (n) => `${n} MiB`,
  commit_bytes: formatBytes,
};

/** The org would hold more than its quota `name` allows. */
export function orgQuotaExceeded(name: keyof typeof UNITS, limit: number, used: number, requested: number): QuotaExceededError {
  const unit = UNITS[name];
  return new QuotaExceededError(
    { name, limit, used, requested },
    `org quota exceeded: ${name} limit is ${unit(limit)}, ${unit(used)} in use, ${unit(requested)} more asked`,
  );
}

/** One VM would be larger than any VM may be. */
export function vmMaximumExceeded(field: string, limit: number, requested: number): QuotaExceededError {
  return new QuotaExceededError({ name: `vm.${field}`, limit, used: 0, requested }, `per-VM limit exceeded: ${field} may be at most ${limit}, ${requested} asked`);
}

/** One request would make more VMs than a request may. */
export function branchCountExceeded(limit: number, requested: number): QuotaExceededError {
  return new QuotaExceededError({ name: 'branch_count', limit, used: 0, requested }, `branch count limit exceeded: at most ${limit} VMs per request, ${requested} asked`);
}
