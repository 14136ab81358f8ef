import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EVENTS_DB } from '@arbor/application';
import { SqliteEventStore } from '@arbor/event-store';
import { pollUntil } from '../support/poll-until';
import { type ProcessTrio, startProcessTrio, stopProcess } from '../support/processes';

const MIB = 1024 * 1024;
const LIMIT = 64 * MIB;
/**
 * The api's V8 heap is capped below what holding the output takes (its string and the JSON body
 * made of it, 128 MiB at least, on top of the ~45 MiB the idle api uses): an api holding it would
 * run out of memory. At 64 MiB the idle api already collected garbage without pause and an
 * unrelated page of the log could tip it over.
 */
const HEAP_MIB = 112;

/** The resident memory of a process, in bytes (VmRSS). */
function residentBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB$/m);
  return Number(line![1]) * 1024;
}

/**
 * Exec bounds that need the api as a process of its own: its memory while a command prints
 * without end (the sync answer is written from the log, never held), and the answer to a client's
 * retry after api and worker were killed with SIGKILL in the middle of the exec.
 */
describe('exec bounds (api, projector and vm-worker as separate processes)', () => {
  let trio: ProcessTrio;
  let vm: string;

  beforeAll(async () => {
    trio = await startProcessTrio({ env: { ARBOR_EXEC_OUTPUT_MAX_BYTES: String(LIMIT) }, apiEnv: { NODE_OPTIONS: `--max-old-space-size=${HEAP_MIB}` }, dataDirs: 'shared' });
    vm = (await trio.call('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: { mem_size_mib: 256 } })).json.vm_id;
  }, 320_000);
  afterAll(() => trio?.stop(), 180_000);

  it('a command printing endlessly ends at the limit with 137 and the note, and the api does not hold its output', async () => {
    const pid = trio.api.child.pid!;
    const baseline = residentBytes(pid);
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, residentBytes(pid))), 20);
    try {
      const res = await trio.call('POST', `/api/v1/vm/${vm}/exec`, { command: ['sh', '-c', 'exec yes'] });
      expect(res.status).toBe(200);
      expect(res.json.exit_code).toBe(137);
      expect(res.json.stdout.length).toBe(LIMIT);
      expect(res.json.stderr).toMatch(/^\narbor: output limit of 67108864 bytes reached; the rest was dropped and the command was stopped \(exit code 137\)\n$/);
    } finally {
      clearInterval(sampler);
    }
    // Holding the output would take its 64 MiB at least twice (bytes and string), past the heap's
    // cap; the api grows by what V8 lets pile up between collections, not by the output.
    process.stdout.write(`api resident memory: ${(baseline / MIB).toFixed(1)} MiB before, peak ${(peak / MIB).toFixed(1)} MiB while 64 MiB of output was answered\n`);
    expect(peak - baseline).toBeLessThan(LIMIT);
  }, 600_000);

  it('SIGKILL of api and worker during an exec: the retry (same X-Idempotency-Key) gets a definite 200 saying it was lost, and it ran once', async () => {
    const key = randomUUID();
    const body = { command: ['sh', '-c', 'echo run >> /tmp/runs; echo started; sleep 120'] };
    // The log the three processes share, read here to see the output recorded before the kill.
    const store = SqliteEventStore.open(join(trio.dirs.api, EVENTS_DB));
    const head = await store.headPosition();
    const first = trio.request('POST', `/api/v1/vm/${vm}/exec`, { body, headers: { 'x-idempotency-key': key } }).catch((error: Error) => error);
    try {
      const printed = (e: { type: string; data: unknown }) => e.type === 'ExecOutput' && Buffer.from((e.data as { data_b64: string }).data_b64, 'base64').toString() === 'started\n';
      await pollUntil(async () => (await store.readAll({ after_position: head })).some(printed), { timeoutMs: 60_000 });
    } finally {
      await store.close();
    }
    await Promise.all([stopProcess(trio.api, 'SIGKILL'), stopProcess(trio.worker, 'SIGKILL')]);
    expect(((await first) as Error).message).toBe('fetch failed'); // the connection went with the api
    await trio.startWorker();
    await trio.startApi();

    const retry = await trio.request('POST', `/api/v1/vm/${vm}/exec`, { body, headers: { 'x-idempotency-key': key } });
    expect(retry.status).toBe(200);
    expect(retry.json).toEqual({
      exit_code: -1,
      stdout: 'started\n',
      stderr: expect.stringMatching(/^\narbor: exec [0-9a-f-]{36} was cut off: the worker restarted while the command ran: it was not run again, and its exit is unknown\n$/),
      exec_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    // The same answer again, and the command ran once.
    const again = await trio.request('POST', `/api/v1/vm/${vm}/exec`, { body, headers: { 'x-idempotency-key': key } });
    expect({ status: again.status, json: again.json }).toEqual({ status: 200, json: retry.json });
    expect((await trio.call('POST', `/api/v1/vm/${vm}/exec`, { command: ['cat', '/tmp/runs'] })).json.stdout).toBe('run\n');
  }, 300_000);
});
