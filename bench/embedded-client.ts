import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@arbor/application';
import type { HypervisorDriver } from '@arbor/hypervisor';
import { type Log, silentLog } from '@arbor/observability';
import { startEmbedded, type EmbeddedArbor } from '../apps/embedded/src/embedded';

export interface BenchArbor {
  arbor: EmbeddedArbor;
  /** JSON call with the admin key; throws on a non-2xx answer. */
  call(method: string, path: string, body?: unknown): Promise<any>;
  stop(): Promise<void>;
}

/**
 * An org's quotas raised to hold `vms` machines of the default size or of 1 GiB (ARBOR_QUOTA_*;
 * the default is 20 VMs). Benchmarks measure speed, not the quotas: theirs hold 100,000 unless a
 * bench says otherwise.
 */
function quotasFor(vms: number): Record<string, string> {
  return {
    ARBOR_QUOTA_VMS: String(vms),
    ARBOR_QUOTA_VCPUS: String(Math.max(32, vms)),
    ARBOR_QUOTA_MEMORY_MIB: String(Math.max(32 * 1024, vms * 1024)),
    ARBOR_QUOTA_DISK_MIB: String(Math.max(256 * 1024, vms * 1024)),
  };
}

/** The embedded service on a fresh data directory, for benchmarks over real HTTP (silent unless given a log). */
export async function startBenchArbor(env: Record<string, string> = {}, driver?: HypervisorDriver, log: Log = silentLog): Promise<BenchArbor> {
  const dir = mkdtempSync(join(tmpdir(), 'arbor-bench-'));
  const arbor = await startEmbedded(loadConfig({ ...process.env, ...quotasFor(100_000), ARBOR_DATA_DIR: dir, PORT: '0', EDGE_PORT: '0', EDGE_HTTP_PORT: '0', ...env }), { driver, log });
  const headers = { authorization: `Bearer ${arbor.createdAdminKey}`, 'content-type': 'application/json' };
  return {
    arbor,
    async call(method, path, body) {
      const response = await fetch(arbor.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await response.text();
      if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${text}`);
      return text ? JSON.parse(text) : undefined;
    },
    async stop() {
      for (const machine of await arbor.driver.list()) await arbor.driver.destroy(machine.vm_id);
      await arbor.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
