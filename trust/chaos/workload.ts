import { randomUUID } from 'node:crypto';
import { type Exchange, exchange } from '../support/exchange';
import type { SeededRandom } from '../support/seeded-random';

/** One write the API acknowledged (2xx), with what it made or changed. */
export type AcknowledgedWrite =
  | { kind: 'create'; vm: string }
  | { kind: 'branch'; vms: string[]; commit: string }
  | { kind: 'exec'; vm: string; exec: string }
  | { kind: 'commit'; vm: string; commit: string }
  | { kind: 'delete'; vm: string }
  | { kind: 'tag'; tag: string; commit: string; correlation: string };

export type OperationKind = AcknowledgedWrite['kind'];

/** What the workload did and what the API said, across rounds. */
export interface WorkloadRecord {
  acknowledged: AcknowledgedWrite[];
  /** VMs whose creation was acknowledged, and those a deletion was asked for (acknowledged or not). */
  created: Set<string>;
  deleteAsked: Set<string>;
  commits: string[];
  tag: { name: string; commit: string } | null;
  /** Requests sent (retries included), answers by class, and writes never acknowledged. */
  sent: number;
  fiveHundreds: number;
  /** The 5xx answers by status and message, to tell a known limit from a new failure. */
  fiveHundredAnswers: Record<string, number>;
  unanswered: number;
  gaveUp: number;
  /** Writes of the workload answered 4xx: each valid, so each is a finding. */
  refused: string[];
}

export function newWorkloadRecord(): WorkloadRecord {
  return { acknowledged: [], created: new Set(), deleteAsked: new Set(), commits: [], tag: null, sent: 0, fiveHundreds: 0, fiveHundredAnswers: {}, unanswered: 0, gaveUp: 0, refused: [] };
}

/** Live VMs the workload keeps at most: machines are real and this host is shared. */
const MAX_LIVE_VMS = 3;
/**
 * A write that got no answer or a 5xx is retried (same idempotency key, same ids), as Vers clients
 * retry, for this long: a killed process is started again within seconds, but a worker restarting
 * on a loaded host takes its time to follow the log again.
 */
const RETRY_FOR_MS = 300_000;
const RETRY_PAUSE_MS = 1500;

/**
 * A client of the API doing a mixed workload: creates, execs, commits, branches, deletes and tag
 * moves, chosen by `random` among what the state allows. Each write carries an idempotency key and
 * a correlation id, and is retried with the same ones when the answer is lost or a 5xx (a process
 * was killed under it); what was finally answered 2xx is recorded as acknowledged.
 */
export class Workload {
  constructor(
    private readonly apiUrl: string,
    private readonly key: string,
    private readonly random: SeededRandom,
    readonly record: WorkloadRecord,
  ) {}

  live(): string[] {
    return [...this.record.created].filter((vm) => !this.record.deleteAsked.has(vm));
  }

  /** Runs one operation: the kind is the one given, or the random choice among those the state allows. */
  async step(kind: OperationKind = this.choose()): Promise<void> {
    const live = this.live();
    const record = this.record;
    switch (kind) {
      case 'create': {
        const answer = await this.write('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: { mem_size_mib: 256 } });
        if (answer?.json?.vm_id) {
          record.created.add(answer.json.vm_id);
          record.acknowledged.push({ kind, vm: answer.json.vm_id });
        }
        return;
      }
      case 'exec': {
        const vm = this.random.pick(live);
        const exec = randomUUID();
        const answer = await this.write('POST', `/api/v1/vm/${vm}/exec`, { command: ['sh', '-c', 'echo chaos; date +%s%N'], exec_id: exec, timeout_secs: 60 });
        if (answer) record.acknowledged.push({ kind, vm, exec });
        return;
      }
      case 'commit': {
        const vm = this.random.pick(live);
        const answer = await this.write('POST', `/api/v1/vm/${vm}/commit`, {});
        if (answer?.json?.commit_id) {
          record.commits.push(answer.json.commit_id);
          record.acknowledged.push({ kind, vm, commit: answer.json.commit_id });
        }
        return;
      }
      case 'branch': {
        const commit = this.random.pick(record.commits);
        const answer = await this.write('POST', `/api/v1/vm/branch/by_commit/${commit}?count=1&wait_boot=true`, undefined);
        const vms: string[] = (answer?.json?.vms ?? []).map((vm: { vm_id: string }) => vm.vm_id);
        if (answer) {
          for (const vm of vms) record.created.add(vm);
          record.acknowledged.push({ kind, vms, commit });
        }
        return;
      }
      case 'delete': {
        const vm = this.random.pick(live);
        record.deleteAsked.add(vm);
        if (await this.write('DELETE', `/api/v1/vm/${vm}`, undefined)) record.acknowledged.push({ kind, vm });
        return;
      }
      case 'tag': {
        const others = record.commits.filter((commit) => commit !== record.tag?.commit);
        const commit = this.random.pick(others);
        const correlation = randomUUID();
        const name = record.tag?.name ?? `chaos-${randomUUID().slice(0, 8)}`;
        const answer = record.tag
          ? await this.write('PATCH', `/api/v1/commit_tags/${name}`, { commit_id: commit }, correlation)
          : await this.write('POST', '/api/v1/commit_tags', { tag_name: name, commit_id: commit }, correlation);
        if (answer) {
          record.tag = { name, commit };
          record.acknowledged.push({ kind, tag: name, commit, correlation });
        }
        return;
      }
    }
  }

  private choose(): OperationKind {
    const live = this.live().length;
    const commits = this.record.commits.length;
    const allowed: OperationKind[] = [];
    if (live < MAX_LIVE_VMS) allowed.push('create', 'create');
    if (live > 0) allowed.push('exec', 'exec', 'commit');
    if (live > 1) allowed.push('delete');
    if (commits > 0 && live < MAX_LIVE_VMS) allowed.push('branch');
    if (commits > 1 || (commits > 0 && !this.record.tag)) allowed.push('tag');
    return this.random.pick(allowed);
  }

  /** Sends a write until it is answered below 500; the answer when 2xx, else null (refused, or given up on). */
  private async write(method: string, target: string, body: unknown, correlation = randomUUID()): Promise<Exchange | null> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.key}`, 'x-idempotency-key': randomUUID(), 'x-correlation-id': correlation };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const deadline = Date.now() + RETRY_FOR_MS;
    for (let attempt = 0; Date.now() < deadline; attempt++) {
      this.record.sent++;
      const answer = await exchange(this.apiUrl, { method, target, headers, body: body === undefined ? undefined : JSON.stringify(body), answerTimeoutMs: 300_000 });
      if (answer.status !== null && answer.status < 500) {
        if (answer.status < 300) return answer;
        this.record.refused.push(`${method} ${target} (attempt ${attempt + 1}): ${answer.status} ${answer.text.slice(0, 300)}`);
        return null;
      }
      if (answer.status === null) this.record.unanswered++;
      else {
        this.record.fiveHundreds++;
        const what = `${answer.status} ${method} ${target.replace(/[0-9a-f-]{36}/g, '{id}').replace(/\?.*/, '')}: ${answer.json?.error ?? answer.text.slice(0, 80)}`;
        this.record.fiveHundredAnswers[what] = (this.record.fiveHundredAnswers[what] ?? 0) + 1;
      }
      await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS));
    }
    this.record.gaveUp++;
    return null;
  }
}
