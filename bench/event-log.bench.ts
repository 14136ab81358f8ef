import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { randomUUID } from 'node:crypto';
import { AggregateRepository, closeInfrastructure, EVENTS_DB, loadConfig, newCommandContext, openInfrastructure, toNewEvents, type Infrastructure } from '@arbor/application';
import { Vm, VM_CONFIG_DEFAULTS, type VmLabelsSet } from '@arbor/domain';
import { type EventStore, SqliteEventStore } from '@arbor/event-store';
import { bootstrapAdminKey } from '../apps/api/src/bootstrap/bootstrap-admin-key';
import { createApiApp } from '../apps/api/src/create-api-app';
import { EXPORT_PAGE } from '../apps/api/src/events/event-export';
import { percentile, report, spreadOf, timed } from './stats';

const ROUNDS = 5;
/** The SQLite adapter's poll for other processes' appends. */
const POLL_MS = 50;

interface BenchApi {
  infra: Infrastructure;
  url: string;
  key: string;
  get(path: string, headers?: Record<string, string>): Promise<Response>;
  stop(): Promise<void>;
}

/** The api alone, in this process, on a fresh SQLite data directory (no projector, no worker: the log endpoints read the log). */
async function startBenchApi(): Promise<BenchApi> {
  const dir = mkdtempSync(join(tmpdir(), 'arbor-bench-log-'));
  const config = loadConfig({ ...process.env, ARBOR_DATA_DIR: dir, PORT: '0', EVENTSTORE_URL: '', MONGODB_URL: '' });
  const infra = await openInfrastructure(config);
  const { created_key } = await bootstrapAdminKey(infra.eventStore, config);
  const app = await createApiApp(infra);
  await app.listen(0, '127.0.0.1');
  const url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
  const key = created_key!;
  return {
    infra,
    url,
    key,
    get: (path, headers = {}) => fetch(url + path, { headers: { authorization: `Bearer ${key}`, ...headers } }),
    async stop() {
      await app.close();
      await closeInfrastructure(infra);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Follows the SSE stream and resolves each wanted position the moment its message is parsed. */
function sseWatcher(response: Response) {
  const waiting = new Map<number, () => void>();
  const seen = new Set<number>();
  const reader = response.body!.getReader();
  void (async () => {
    const decoder = new TextDecoder();
    let buffered = '';
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      buffered += decoder.decode(chunk.value, { stream: true });
      const messages = buffered.split('\n\n');
      buffered = messages.pop()!;
      for (const message of messages) {
        const id = /^id: (\d+)$/m.exec(message);
        if (!id || !message.includes('\ndata: ')) continue;
        const position = Number(id[1]);
        seen.add(position);
        waiting.get(position)?.();
      }
    }
  })().catch(() => {});
  return {
    received: (position: number) => (seen.has(position) ? Promise.resolve() : new Promise<void>((resolve) => waiting.set(position, resolve))),
    stop: () => reader.cancel(),
  };
}

/** Downloads with curl, a client in a process of its own (as an analytics job is); resolves the bytes. */
function download(url: string, key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    execFile('curl', ['-sf', '-o', '/dev/null', '-w', '%{size_download}', '-H', `authorization: Bearer ${key}`, url], (error, stdout) =>
      error ? reject(error) : resolve(Number(stdout)),
    );
  });
}

/** Appends one VM creation through the domain; resolves its log position. */
async function createVm(store: EventStore, vm_id = randomUUID()): Promise<number> {
  const command = { type: 'RequestVmCreation' as const, vm_id, org_id: 'bench', owner_id: 'bench', config: VM_CONFIG_DEFAULTS, labels: null, env: {}, ip: 'fd00::1', now: new Date().toISOString() };
  return (await new AggregateRepository(store).handle(Vm, vm_id, command, newCommandContext({ org_id: 'bench', actor_key_id: null }))).position!;
}

/**
 * SSE end to end: from an append until a client following `GET /api/v1/events/stream` has parsed
 * the message. Two writers: the api's own store (the embedded shape: a local append wakes the
 * stream at once), and a second store on the same file (the distributed shape: another process's
 * append, found by the SQLite adapter's 50 ms poll), appends coming at random moments.
 * Client and api share this process.
 */
export async function benchEventStream(samples = 300): Promise<void> {
  const api = await startBenchApi();
  const other = SqliteEventStore.open(join(api.infra.config.dataDir, EVENTS_DB));
  try {
    const response = await api.get(`/api/v1/events/stream?after=${await api.infra.eventStore.headPosition()}`);
    const { received, stop } = sseWatcher(response);
    const latencies = async (store: EventStore) => {
      const ms: number[] = [];
      for (let i = 0; i < samples; i++) {
        await new Promise((resolve) => setTimeout(resolve, Math.random() * POLL_MS)); // appends come at any time
        const start = process.hrtime.bigint();
        await received(await createVm(store));
        ms.push(Number(process.hrtime.bigint() - start) / 1e6);
      }
      return ms;
    };
    const local = await latencies(api.infra.eventStore);
    const remote = await latencies(other);
    await stop();
    console.log('live event stream (SSE, api alone, SQLite, append through the domain → client parsed it)');
    report([
      ['append in the api process', spreadOf(local)],
      ['append by another process (polled)', spreadOf(remote)],
    ]);
  } finally {
    await other.close();
    await api.stop();
  }
}

/**
 * Export throughput: the whole log as NDJSON over HTTP (presented, redacted, serialized, taken
 * by curl in a process of its own), against reading `$all` directly with readAll in the pages the
 * export reads.
 */
export async function benchEventExport(events = 100_000): Promise<void> {
  const api = await startBenchApi();
  const store = api.infra.eventStore;
  try {
    const labels = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`label_${i}`, `value-${i}-${'x'.repeat(16)}`]));
    for (let done = 0; done < events; done += 1000) {
      const vm_id = randomUUID();
      await createVm(store, vm_id); // then label changes of the log's usual size
      const batch: VmLabelsSet[] = Array.from({ length: 1000 }, () => ({ type: 'VmLabelsSet', data: { vm_id, labels } }));
      await store.append(Vm.stream(vm_id), toNewEvents(batch, newCommandContext({ org_id: 'bench', actor_key_id: null })), 'any');
    }
    const total = (await store.headPosition()) + 1;
    const readAllPaged = async () => {
      for (let after = -1; ; ) {
        const page = await store.readAll({ after_position: after, max_count: EXPORT_PAGE });
        if (!page.length) break;
        after = page[page.length - 1].position;
      }
    };
    // Alternated rounds, the median of each: the figures of a busy machine move from run to run.
    const read: number[] = [];
    const exported: number[] = [];
    let bytes = 0;
    for (let round = 0; round < ROUNDS; round++) {
      read.push((await timed(readAllPaged))[1]);
      const [size, ms] = await timed(() => download(`${api.url}/api/v1/events/export`, api.key));
      exported.push(ms);
      bytes = size;
    }
    const rate = (ms: number) => Math.round(total / (ms / 1000));
    console.log(`event export (NDJSON over HTTP to curl, api alone, SQLite, ${total} events, ${(bytes / 2 ** 20).toFixed(0)} MiB, median of ${ROUNDS})`);
    report([
      ['export', `${rate(percentile(exported, 50))} events/s`],
      [`readAll in pages of ${EXPORT_PAGE}`, `${rate(percentile(read, 50))} events/s`],
      ['export ÷ readAll', `${(percentile(read, 50) / percentile(exported, 50)).toFixed(2)}×`],
    ]);
  } finally {
    await api.stop();
  }
}

/** Both figures of the log as a product: live follow latency, export throughput. */
export async function benchEventLog(): Promise<void> {
  await benchEventStream();
  console.log('');
  await benchEventExport();
}
