import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ArborConfig, loadConfig } from '@arbor/application';
import { type HypervisorDriver, type MachineSpec, type SnapshotMachineSpec, chooseAccel } from '@arbor/hypervisor';
import { MachineFreezer, readQemuBaseImage, QmpClient } from '@arbor/hypervisor/primitives';
import { createQemuDriver, createSandboxDriver } from '../apps/vm-worker/src/open-driver';
import { watchPauseWindows } from './pause-window';
import { measureQemuPrimitives } from './qemu-primitives';
import { measureSandboxPrimitives } from './sandbox-primitives';
import { percentile, report, spread, spreadOf, timed } from './stats';

export type DriverKind = 'sandbox' | 'qemu';

interface Counts {
  creates: number;
  execs: number;
  commits: number;
  branches: number;
}

interface DriverSamples {
  createToExec: number[];
  /** Sandbox: creates made from nothing (no warm machine to claim). */
  coldCreateToExec: number[];
  exec: number[];
  commit: number[];
  /** Pause windows seen during the commits, by what was watched (see pauseWatchers). */
  paused: Record<string, number[]>;
  branchToExec: number[];
}

/** A row: the driver's samples next to the bare primitives its operation is made of. */
interface Row {
  what: string;
  driver: number[];
  bare: { name: string; samples: number[] }[];
}

/**
 * Create, exec, commit and branch through the driver interface, next to the same primitives
 * called directly (a bare runtime exec, its pause/resume, QMP stop/cont, guest-exec …), so the driver's
 * own overhead shows as a ratio. `rounds` creates, commits and branches (at least 5 for a p50
 * worth the name; under TCG each create or branch costs seconds); 10× as many execs (≥ 50).
 * Tails that are the slowest sample say max, not p99 (see `spread`). Runs on a temporary data
 * directory; base images come from the shared cache.
 */
export async function benchDriver(kind: DriverKind, rounds: number): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'arbor-bench-drv-'));
  // ARBOR_SANDBOX_RUNTIME=runc measures the sandbox under runc.
  const { cacheDir, sandboxRuntime } = loadConfig(process.env);
  const config = { dataDir, cacheDir, sandboxRuntime };
  // The sandbox's creates claim warm machines (a pool as large as the creates), as they do by
  // default, and its cold machines (branch children) spare disks (as many as the branches).
  const driver: HypervisorDriver =
    kind === 'sandbox' ? createSandboxDriver({ ...config, sandboxWarmPool: rounds, sandboxDiskPool: rounds }) : createQemuDriver(config);
  const counts: Counts = { creates: rounds, execs: Math.max(50, rounds * 10), commits: rounds, branches: rounds };
  try {
    const probe = await driver.probe();
    if (!probe.ok) {
      console.log(`${kind} driver benchmarks SKIPPED: the driver's probe failed here (${probe.reason})`);
      return;
    }
    await driver.prepare();
    const { samples, source } = await measureThroughDriver(driver, kind, counts);
    if (kind === 'sandbox') samples.coldCreateToExec = await coldCreates(config, counts.creates);
    console.log(
      `${kind} driver (${probe.reason.split(':')[0]}) vs. the bare primitives it is built from: ` +
        `${counts.creates} creates, ${counts.execs} execs, ${counts.commits} commits, ${counts.branches} branches`,
    );
    if (kind === 'sandbox') {
      const stateDir = join(dataDir, 'machines', 'sandbox');
      const bare = await measureSandboxPrimitives(
        { stateDir, cacheDir: config.cacheDir, vm_id: source, scratchDir: join(dataDir, 'bare') },
        { ops: rounds, execs: counts.execs },
      );
      const overlay = { name: 'overlay mount', samples: bare.overlayMount };
      const exec = { name: `${bare.runtime} exec true`, samples: bare.runtimeExecTrue };
      const freezer = { name: `${bare.runtime} pause → resume`, samples: bare.freezerCycle };
      const copy = { name: 'cp -a upper', samples: bare.copyUpper };
      printRows([
        { what: 'create (warm pool) → first exec answered', driver: samples.createToExec, bare: [overlay, exec] },
        { what: 'create (cold) → first exec answered', driver: samples.coldCreateToExec, bare: [overlay, exec] },
        { what: 'exec `true` round trip', driver: samples.exec, bare: [exec] },
        { what: 'commit (whole call)', driver: samples.commit, bare: [freezer, copy] },
        { what: 'commit: source frozen', driver: samples.paused.frozen, bare: [freezer, copy] },
        { what: 'branch (1 child) → child exec answered', driver: samples.branchToExec, bare: [freezer, copy, overlay, exec] },
      ]);
      printBare([overlay, exec, freezer, copy]);
    } else {
      // An idle TCG guest still takes CPU: the bare machines run alone.
      await destroyEverything(driver);
      const image = await readQemuBaseImage(config.cacheDir);
      if (!image) throw new Error('qemu base image vanished from the cache');
      const { accel } = await chooseAccel(async () => image, config.cacheDir, join(dataDir, 'accel-probe'));
      const bare = await measureQemuPrimitives(image, accel, join(dataDir, 'bare'), counts);
      const boot = { name: 'QEMU start → agent ping', samples: bare.startToPing };
      const exec = { name: 'guest-exec true + status', samples: bare.guestExecTrue };
      const capture = { name: 'stop → snapshot-sync → migrate → cont', samples: bare.capturePause };
      const restore = { name: 'restore → agent ping', samples: bare.restoreToPing };
      printRows([
        { what: 'create → first exec answered', driver: samples.createToExec, bare: [boot, exec] },
        { what: 'exec `true` round trip', driver: samples.exec, bare: [exec] },
        { what: 'commit (whole call)', driver: samples.commit, bare: [capture] },
        { what: 'commit: source stopped (stop → cont)', driver: samples.paused.stopped, bare: [capture] },
        { what: 'branch (1 child) → child exec answered', driver: samples.branchToExec, bare: [capture, restore, exec] },
      ]);
      printBare([
        boot,
        exec,
        { name: 'QMP stop + cont', samples: bare.stopCont },
        { name: 'blockdev-snapshot-sync (running)', samples: bare.snapshotSync },
        capture,
        restore,
      ]);
    }
  } finally {
    await destroyEverything(driver).catch((error) => console.error(`cleanup of ${kind} machines failed: ${error}`));
    await driver.close?.();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Everything through the HypervisorDriver interface; leaves the source machine running. */
async function measureThroughDriver(driver: HypervisorDriver, kind: DriverKind, counts: Counts): Promise<{ samples: DriverSamples; source: string }> {
  const samples: DriverSamples = { createToExec: [], coldCreateToExec: [], exec: [], commit: [], paused: {}, branchToExec: [] };
  let source: string | null = null;
  for (let i = 0; i < counts.creates; i++) {
    const spec = benchSpec(kind);
    // Creates arriving slower than the pool refills: each finds a warm machine waiting.
    await (driver as { warmPoolFull?: () => Promise<void> }).warmPoolFull?.();
    samples.createToExec.push((await timed(async () => {
      await driver.create(spec);
      await execOk(driver, spec.vm_id, ['true']);
    }))[1]);
    if (source) await driver.destroy(source); // one machine at a time: they share 2 cores
    source = spec.vm_id;
  }
  if (!source) throw new Error('no machine created');
  const vm_id = source;
  for (let i = 0; i < counts.execs; i++) samples.exec.push((await timed(() => execOk(driver, vm_id, ['true'])))[1]);

  // A little data of its own, so a commit has something to copy (the sandbox copies its upper layer).
  await execOk(driver, vm_id, ['sh', '-c', 'head -c 1048576 /dev/urandom > /root/bench-payload']);
  const watchers = pauseWatchers(kind);
  try {
    for (let i = 0; i < counts.commits; i++) samples.commit.push((await timed(() => driver.commit(vm_id, randomUUID())))[1]);
  } finally {
    for (const [name, watcher] of Object.entries(watchers)) {
      watcher.stop();
      samples.paused[name] = watcher.windows;
    }
  }

  // A branch as the worker makes one: a commit, then the child started from that snapshot.
  await (driver as { spareDisksFull?: () => Promise<void> }).spareDisksFull?.();
  for (let i = 0; i < counts.branches; i++) {
    const child = childSpec();
    const snapshot_id = randomUUID();
    samples.branchToExec.push((await timed(async () => {
      await driver.commit(vm_id, snapshot_id);
      await driver.startFromSnapshot(snapshot_id, child);
      await execOk(driver, child.vm_id, ['true']);
    }))[1]);
    await driver.destroy(child.vm_id);
  }
  return { samples, source: vm_id };
}

/** The low-level calls each driver pauses and resumes its source with. */
function pauseWatchers(kind: DriverKind): Record<string, ReturnType<typeof watchPauseWindows>> {
  if (kind === 'sandbox') {
    return { frozen: watchPauseWindows(MachineFreezer.prototype, 'setFrozen', ([, frozen]) => frozen === true, ([, frozen]) => frozen === false) };
  }
  return { stopped: watchPauseWindows(QmpClient.prototype, 'execute', ([command]) => command === 'stop', ([command]) => command === 'cont') };
}

/** The machines measured: the sandbox's in the shape of a VM asked for with the defaults (the warm pool's); qemu's smaller (TCG). */
function benchSpec(kind: DriverKind): MachineSpec {
  return { ...childSpec(), vcpu_count: 1, mem_size_mib: kind === 'sandbox' ? 512 : 256, fs_size_mib: 1024, image_name: 'default' };
}

/** Sandbox creates from nothing, one at a time, on a driver of their own without a warm pool. */
async function coldCreates(config: { cacheDir: string; sandboxRuntime: ArborConfig['sandboxRuntime'] }, count: number): Promise<number[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'arbor-bench-cold-'));
  const driver = createSandboxDriver({ ...config, dataDir });
  const samples: number[] = [];
  try {
    await driver.prepare();
    for (let i = 0; i < count; i++) {
      const spec = benchSpec('sandbox');
      samples.push((await timed(async () => {
        await driver.create(spec);
        await execOk(driver, spec.vm_id, ['true']);
      }))[1]);
      await driver.destroy(spec.vm_id);
    }
  } finally {
    await destroyEverything(driver);
    await driver.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  return samples;
}

/** A fresh identity; no authorized SSH key (writing one is a single small file either way). */
function childSpec(): SnapshotMachineSpec {
  const vm_id = randomUUID();
  return { vm_id, env: {}, identity: { hostname: `bench-${vm_id.slice(0, 8)}`, ssh_authorized_key: null }, network_group: 'bench' };
}

async function execOk(driver: HypervisorDriver, vm_id: string, argv: string[]): Promise<void> {
  const { exit_code } = await driver.exec(vm_id, { argv }, () => undefined);
  if (exit_code !== 0) throw new Error(`${argv.join(' ')} exited ${exit_code} in ${vm_id}`);
}

async function destroyEverything(driver: HypervisorDriver): Promise<void> {
  for (const machine of await driver.list()) await driver.destroy(machine.vm_id);
  for (const snapshot of await driver.listSnapshots()) await driver.deleteSnapshot(snapshot.snapshot_id);
}

/**
 * driver p50 / p99 | bare p50 / p99 | ratio of the p50s. A bare figure made of several primitives
 * is the sum of their percentiles (measured separately), labelled by its smallest sample count.
 */
function printRows(rows: Row[]): void {
  report(
    rows.map(({ what, driver, bare }) => {
      if (bare.length === 0) return [what, `driver ${spreadOf(driver)}  | bare —`];
      const sum = (p: number) => bare.reduce((total, part) => total + percentile(part.samples, p), 0);
      const fewest = Math.min(...bare.map((part) => part.samples.length));
      const ratio = percentile(driver, 50) / sum(50);
      const parts = bare.map((part) => part.name).join(' + ');
      return [what, `driver ${spreadOf(driver)}  | bare ${spread(sum(50), sum(99), fewest)} (${parts})  | ×${ratio.toFixed(1)}`];
    }),
  );
}

function printBare(parts: { name: string; samples: number[] }[]): void {
  console.log('  bare primitives:');
  report(parts.map(({ name, samples }) => [`  ${name}`, spreadOf(samples)]));
}
