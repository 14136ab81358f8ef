import { availableParallelism, hostname } from 'node:os';
import { resolve } from 'node:path';
import { loadLogSettings, loadMetricsSettings, type LogSettings, type MetricsSettings } from '@arbor/observability';
import { loadDeployConfig, type DeployConfig } from './deploy/deploy-config';
import { loadResourceSettings, type ResourceSettings } from './resource-settings';
import { positiveSetting, wholeSetting } from './settings';
import { loadEdgeSettings, type EdgeSettings } from './edge-settings';
import { loadImageSettings, type ImageSettings } from './image-settings';
import { loadShellAuthSettings, loadTrustProxy, type ShellAuthSettings } from './shell-auth-settings';
import { loadWebhookSettings, type WebhookSettings } from './webhook-settings';

/**
 * Machine operations the worker runs at once by default: sixteen per CPU. Most of an operation is
 * waiting (on the kernel, a machine, a lock, a disk), and a claim of a warm machine or a destroy
 * costs little CPU; the drivers bound their own dear work (booting a machine cold) to the CPUs.
 */
export function defaultWorkerConcurrency(): number {
  return 16 * availableParallelism();
}

/** Every setting Arbor reads, from the environment, in one place. */
export interface ArborConfig {
  /** Embedded stores, the worker's state and machines live here. */
  dataDir: string;
  /** Base images are cached here, outside any one data directory, so fresh data dirs reuse them. */
  cacheDir: string;
  port: number;
  /** Set: the EventStoreDB adapter; unset: the embedded SQLite event store. */
  eventStoreUrl: string | null;
  /** Set: the MongoDB adapter; unset: the embedded SQLite read-model store. */
  mongoUrl: string | null;
  hypervisor: 'auto' | 'sandbox' | 'qemu';
  /** Names this worker (one per hypervisor host). */
  workerId: string;
  /** How long a write waits for the projector/worker before answering 504. */
  waitTimeoutMs: number;
  /** How often the worker compares every VM it knows with the host again (finds dead machines). */
  resyncIntervalMs: number;
  /** How many machine operations (create, destroy, commit …) the worker runs at once, on different VMs. */
  workerConcurrency: number;
  /** Sandbox machines kept booted ahead for creates to claim (0: none). */
  sandboxWarmPool: number;
  /** Sandbox disks formatted and mounted ahead for machines booted cold (ARBOR_SANDBOX_DISK_POOL). */
  sandboxDiskPool: number;
  /** The OCI runtime new sandbox machines run under (ARBOR_SANDBOX_RUNTIME): auto (crun where it runs, else runc), crun or runc. */
  sandboxRuntime: 'auto' | 'crun' | 'runc';
  /** The name of the org made at first start (public repositories are `<org name>/<repo>`). */
  orgName: string;
  /** How the webhook deliverer tries (attempts, backoff, request timeout). */
  webhooks: WebhookSettings;
  /** How often a quiet live event stream sends a heartbeat comment, so clients and proxies see it is alive. */
  sseHeartbeatMs: number;
  /** ARBOR_LOG_LEVEL, ARBOR_LOG_FORMAT. */
  log: LogSettings;
  /** ARBOR_METRICS_PORT, ARBOR_METRICS_TOKEN. */
  metrics: MetricsSettings;
  /** Sign-in by e-mail (shell-auth): SMTP, links, sign-up. */
  shellAuth: ShellAuthSettings;
  /** Which proxies' X-Forwarded-For names the client (proxy-addr's forms: see loadTrustProxy). */
  trustProxy: boolean | number | string;
  /** How often each api process writes down the keys it saw used (their `last_used_at`, to the hour). */
  keyUsageFlushMs: number;
  /** How VMs are networked on this host (the worker's drivers; see the README's configuration). */
  vmNetwork: VmNetworkSettings;
  /** Quotas, per-VM maxima, the exec output cap and the data disk's free-space floor. */
  resources: ResourceSettings;
  /** The edge: its domain, ports and certificate. */
  edge: EdgeSettings;
  /** Deploys: the git host and its credentials, the clone's bounds, the steps' time limits. */
  deploy: DeployConfig;
  /** Base images: uploads, caps, registries, S3. */
  images: ImageSettings;
}

/** Structurally the hypervisor's NetworkSettings (validated there, where the addresses are planned). */
export interface VmNetworkSettings {
  bridge: string;
  ipv4Subnet: string;
  ipv6Prefix: string | null;
  egress: boolean;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): ArborConfig {
  const hypervisor = choiceSetting(env, 'HYPERVISOR', ['auto', 'sandbox', 'qemu'] as const, 'auto');
  const port = Number(env.PORT ?? 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be a TCP port (got "${env.PORT}")`);
  const dataDir = resolve(env.ARBOR_DATA_DIR ?? 'data');
  return {
    dataDir,
    cacheDir: resolve(env.ARBOR_CACHE_DIR ?? '/var/cache/arbor'),
    port,
    eventStoreUrl: env.EVENTSTORE_URL || null,
    mongoUrl: env.MONGODB_URL || null,
    hypervisor,
    workerId: env.ARBOR_WORKER_ID ?? hostname(),
    waitTimeoutMs: Number(env.ARBOR_WAIT_TIMEOUT_MS ?? 300_000),
    resyncIntervalMs: Number(env.ARBOR_RESYNC_INTERVAL_MS ?? 10_000),
    workerConcurrency: positiveSetting(env, 'ARBOR_WORKER_CONCURRENCY', defaultWorkerConcurrency()),
    sandboxWarmPool: wholeSetting(env, 'ARBOR_SANDBOX_WARM_POOL', 2),
    sandboxDiskPool: wholeSetting(env, 'ARBOR_SANDBOX_DISK_POOL', 2),
    sandboxRuntime: choiceSetting(env, 'ARBOR_SANDBOX_RUNTIME', ['auto', 'crun', 'runc'] as const, 'auto'),
    orgName: env.ARBOR_ORG_NAME || 'default',
    webhooks: loadWebhookSettings(env),
    sseHeartbeatMs: positiveSetting(env, 'ARBOR_SSE_HEARTBEAT_MS', 15_000),
    log: loadLogSettings(env),
    metrics: loadMetricsSettings(env),
    shellAuth: loadShellAuthSettings(env, port),
    trustProxy: loadTrustProxy(env),
    keyUsageFlushMs: positiveSetting(env, 'ARBOR_KEY_USAGE_FLUSH_MS', 60_000),
    vmNetwork: loadVmNetworkSettings(env),
    resources: loadResourceSettings(env),
    edge: loadEdgeSettings(env),
    deploy: loadDeployConfig(env),
    images: loadImageSettings(env, dataDir),
  };
}

/** A setting that is one word of `choices` (any case), `fallback` when unset; anything else is refused, saying which words. */
function choiceSetting<T extends string>(env: NodeJS.ProcessEnv, name: string, choices: readonly T[], fallback: T): T {
  const value = (env[name] ?? fallback).toLowerCase();
  if (!(choices as readonly string[]).includes(value)) {
    throw new Error(`${name} must be ${choices.slice(0, -1).join(', ')} or ${choices[choices.length - 1]} (got "${env[name]}")`);
  }
  return value as T;
}

function loadVmNetworkSettings(env: NodeJS.ProcessEnv): VmNetworkSettings {
  const egress = choiceSetting(env, 'ARBOR_VM_EGRESS', ['on', 'off'] as const, 'on');
  return {
    bridge: env.ARBOR_VM_BRIDGE || 'arbor0',
    ipv4Subnet: env.ARBOR_VM_IPV4_SUBNET || '10.213.0.0/16',
    ipv6Prefix: env.ARBOR_VM_IPV6_PREFIX || null,
    egress: egress === 'on',
  };
}
