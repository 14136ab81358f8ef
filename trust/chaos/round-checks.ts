import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EVENTS_DB, PROJECTOR_CHECKPOINT, READ_MODELS_DB } from '@arbor/application';
import { type RecordedEvent, SqliteEventStore } from '@arbor/event-store';
import { SqliteReadModelStore } from '@arbor/read-models';
import { ALL_PROJECTIONS, rebuildReadModels } from '@arbor/projections';
import { exchange } from '../support/exchange';
import type { ChaosDeployment } from './deployment';
import type { AcknowledgedWrite, WorkloadRecord } from './workload';

/** What one round's checks found: counts for the figures, and every failure in words. */
export interface RoundFindings {
  checkedWrites: number;
  lost: number;
  duplicated: number;
  lostVms: number;
  readModelDifferences: number;
  documentsCompared: number;
  hostLeftovers: number;
  failures: string[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits until the log is still and the projector has applied all of it: the head unchanged over
 * two looks a second apart, and the projector's checkpoint at it.
 */
export async function waitUntilSettled(deployment: ChaosDeployment, timeoutMs = 300_000): Promise<void> {
  const events = SqliteEventStore.open(join(deployment.dataDir, EVENTS_DB));
  const readModels = SqliteReadModelStore.open(join(deployment.dataDir, READ_MODELS_DB));
  try {
    const deadline = Date.now() + timeoutMs;
    let last = -2;
    for (;;) {
      const head = await events.headPosition();
      if (head === last && (await readModels.getCheckpoint(PROJECTOR_CHECKPOINT)) === head) return;
      if (Date.now() > deadline) throw new Error(`the log did not settle in ${timeoutMs} ms (head ${head})`);
      last = head;
      await sleep(1000);
    }
  } finally {
    await readModels.close();
    await events.close();
  }
}

/** After a round, on a settled deployment: every check of the chaos part. */
export async function checkRound(deployment: ChaosDeployment, record: WorkloadRecord): Promise<RoundFindings> {
  const findings: RoundFindings = { checkedWrites: 0, lost: 0, duplicated: 0, lostVms: 0, readModelDifferences: 0, documentsCompared: 0, hostLeftovers: 0, failures: [] };
  const events = SqliteEventStore.open(join(deployment.dataDir, EVENTS_DB));
  try {
    const log = await events.readAll({ max_count: 10_000_000 });
    checkExactlyOnce(log, record.acknowledged, findings);
    await checkNoVmLost(deployment, record, findings);
    await checkReadModels(deployment, events, findings);
    checkHostClean(deployment, deletedVms(log), findings);
  } finally {
    await events.close();
  }
  return findings;
}

/** Each acknowledged write's own event, by what it names: it must be in the log once, never twice. */
function checkExactlyOnce(log: RecordedEvent[], acknowledged: AcknowledgedWrite[], findings: RoundFindings): void {
  const count = (type: string, match: (data: any, event: RecordedEvent) => boolean) => log.filter((e) => e.type === type && match(e.data, e)).length;
  const expectOnce = (write: AcknowledgedWrite, what: string, times: number) => {
    findings.checkedWrites++;
    if (times === 1) return;
    if (times === 0) findings.lost++;
    else findings.duplicated++;
    findings.failures.push(`acknowledged ${write.kind} is in the log ${times} times (${what})`);
  };
  for (const write of acknowledged) {
    switch (write.kind) {
      case 'create':
        expectOnce(write, `VmCreationRequested of ${write.vm}`, count('VmCreationRequested', (d) => d.vm_id === write.vm));
        break;
      case 'branch':
        for (const vm of write.vms) expectOnce(write, `VmCreationRequested of ${vm} from ${write.commit}`, count('VmCreationRequested', (d) => d.vm_id === vm));
        break;
      case 'exec':
        expectOnce(write, `ExecRequested ${write.exec}`, count('ExecRequested', (d) => d.exec_id === write.exec));
        // Its end, once: the exit, or (the worker killed while it ran) the exec recorded lost, never run again.
        expectOnce(write, `ExecExited or ExecLost ${write.exec}`, ['ExecExited', 'ExecLost'].reduce((n, type) => n + count(type, (_, e) => e.stream_id.endsWith(write.exec)), 0));
        break;
      case 'commit':
        expectOnce(write, `CommitCreated ${write.commit}`, count('CommitCreated', (d) => d.commit_id === write.commit));
        break;
      case 'delete':
        expectOnce(write, `VmDeleted ${write.vm}`, count('VmDeleted', (d) => d.vm_id === write.vm));
        break;
      case 'tag':
        expectOnce(
          write,
          `the tag ${write.tag} created at or moved to ${write.commit}`,
          count('TagCreated', (d, e) => d.commit_id === write.commit && e.metadata.correlation_id === write.correlation) +
            count('TagMoved', (d, e) => d.commit_id === write.commit && e.metadata.correlation_id === write.correlation),
        );
        break;
    }
  }
}

/** Every VM whose creation was acknowledged and whose deletion was never asked for runs, as the API and the host see it. */
async function checkNoVmLost(deployment: ChaosDeployment, record: WorkloadRecord, findings: RoundFindings): Promise<void> {
  const onHost = new Map((await deployment.driver.list()).map((machine) => [machine.vm_id, machine]));
  for (const vm of [...record.created].filter((id) => !record.deleteAsked.has(id))) {
    const status = await exchange(deployment.apiUrl, { method: 'GET', target: `/api/v1/vm/${vm}/status`, headers: { authorization: `Bearer ${deployment.adminKey}` } });
    const state = status.json?.state;
    const hostState = onHost.has(vm) ? await deployment.driver.status(vm) : null;
    if (status.status !== 200 || state !== 'running' || hostState !== 'running') {
      findings.lostVms++;
      findings.failures.push(`acknowledged VM ${vm}: the API answers ${status.status} ${state ?? status.text.slice(0, 120)}, the host has it ${hostState ?? 'not at all'}`);
    }
  }
}

/** The read models as the projector left them, document by document, against a rebuild from the log into a fresh store. */
async function checkReadModels(deployment: ChaosDeployment, events: SqliteEventStore, findings: RoundFindings): Promise<void> {
  const live = SqliteReadModelStore.open(join(deployment.dataDir, READ_MODELS_DB));
  const freshDir = mkdtempSync(join(tmpdir(), 'arbor-chaos-rebuild-'));
  const fresh = SqliteReadModelStore.open(join(freshDir, READ_MODELS_DB));
  try {
    const head = await events.headPosition();
    await rebuildReadModels({ eventStore: events, readModels: fresh });
    if ((await events.headPosition()) !== head) findings.failures.push('the log moved while the read models were compared: the deployment was not settled');
    for (const collection of ALL_PROJECTIONS.flatMap((projection) => projection.collections)) {
      const byId = async (store: SqliteReadModelStore) => new Map((await store.find(collection, {}, { sort: { _id: 1 } })).map((doc) => [String(doc._id), doc]));
      const [kept, rebuilt] = [await byId(live), await byId(fresh)];
      for (const id of new Set([...kept.keys(), ...rebuilt.keys()])) {
        findings.documentsCompared++;
        const [a, b] = [JSON.stringify(kept.get(id) ?? null), JSON.stringify(rebuilt.get(id) ?? null)];
        if (a === b) continue;
        findings.readModelDifferences++;
        findings.failures.push(`read model ${collection}/${id}: kept ${a.slice(0, 300)}, rebuilt ${b.slice(0, 300)}`);
      }
    }
  } finally {
    await fresh.close();
    await live.close();
    rmSync(freshDir, { recursive: true, force: true });
  }
}

function deletedVms(log: RecordedEvent[]): string[] {
  return log.filter((e) => e.type === 'VmDeleted').map((e) => (e.data as { vm_id: string }).vm_id);
}

/** Nothing of a deleted VM on the host: no process, mount, cgroup, loop device or file that names it. */
function checkHostClean(deployment: ChaosDeployment, deleted: string[], findings: RoundFindings): void {
  if (deleted.length === 0) return;
  const traces = hostTraces(deployment.dataDir);
  for (const vm of deleted) {
    for (const trace of traces.filter((t) => t.includes(vm))) {
      findings.hostLeftovers++;
      findings.failures.push(`deleted VM ${vm} left ${trace}`);
    }
  }
}

/** Everything on the host a VM's id could show in, one line each. */
function hostTraces(dataDir: string): string[] {
  const traces: string[] = [];
  const read = (path: string) => {
    try {
      return readFileSync(path, 'utf8');
    } catch {
      return '';
    }
  };
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    // A zombie (Z, or X as it goes) runs nothing and holds nothing but its pid until its parent
    // reaps it: for a machine's last processes, the host's init, once the machine's PID
    // namespace went with its init.
    const stat = read(`/proc/${pid}/stat`);
    const state = stat.charAt(stat.lastIndexOf(')') + 2); // after the name, which may hold ") " itself
    if (state === 'Z' || state === 'X') continue;
    const cmdline = read(`/proc/${pid}/cmdline`).split('\0').join(' ');
    traces.push(`process ${pid}: ${cmdline} (cgroup ${read(`/proc/${pid}/cgroup`).trim()})`);
  }
  for (const line of read('/proc/self/mounts').split('\n')) traces.push(`mount ${line}`);
  traces.push(...walk('/sys/fs/cgroup', 6, (entry) => entry.isDirectory()).map((dir) => `cgroup ${dir}`));
  if (existsSync('/sys/block')) {
    for (const device of readdirSync('/sys/block').filter((name) => name.startsWith('loop'))) {
      const backing = read(`/sys/block/${device}/loop/backing_file`).trim();
      if (backing) traces.push(`loop device /dev/${device} on ${backing}`);
    }
  }
  traces.push(...walk(dataDir, 4, () => true).map((path) => `file ${path}`));
  traces.push(...walk('/run/arbor', 3, () => true).map((path) => `file ${path}`));
  return traces;
}

/** Paths under `root` to `depth` levels that `keep` keeps (symbolic links not followed). */
function walk(root: string, depth: number, keep: (entry: import('node:fs').Dirent) => boolean): string[] {
  if (depth === 0 || !existsSync(root)) return [];
  let entries: import('node:fs').Dirent[];
  try {
    entries = readdirSync(root, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((entry) => {
    const path = join(root, entry.name);
    return [...(keep(entry) ? [path] : []), ...(entry.isDirectory() ? walk(path, depth - 1, keep) : [])];
  });
}
