import { randomUUID } from 'node:crypto';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';
import { issueKeyForNewOrg } from '../support/issue-key';

const LIMIT = 1024 * 1024;
const CHUNK_MAX = 64 * 1024;
const NOTE = `\narbor: output limit of ${LIMIT} bytes reached; the rest was dropped and the command was stopped (exit code 137)\n`;

type Line = { type: string; exec_id: string | null; cursor: number; stream?: string; data_b64?: string; exit_code?: number };

/**
 * What a command may print is bounded (ARBOR_EXEC_OUTPUT_MAX_BYTES): past it the command is
 * stopped and the exec ends with exit code 137 and a note on stderr, in the sync answer, the NDJSON
 * stream and the logs alike. Exec ids are the org's: another org's exec of the same id is neither
 * met nor in the way. Sandbox driver.
 */
describe('exec bounds (HTTP, sandbox driver)', () => {
  let arbor: TestArbor;
  let vm: string;

  beforeAll(async () => {
    arbor = await startTestArbor({ env: { HYPERVISOR: 'sandbox', ARBOR_EXEC_OUTPUT_MAX_BYTES: String(LIMIT) } });
    vm = await arbor.bootVm({ mem_size_mib: 256 });
  }, 300_000);
  afterAll(() => arbor?.destroy());

  const sh = (script: string, extra: Record<string, unknown> = {}) => ({ command: ['sh', '-c', script], ...extra });
  const exec = (body: unknown, target = vm, key?: string) => arbor.request('POST', `/api/v1/vm/${target}/exec`, { body, key });
  const ndjson = async (path: string, body: unknown, key = arbor.adminKey): Promise<Line[]> => {
    const res = await fetch(arbor.url + path, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(res.status).toBe(200);
    return (await res.text())
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Line);
  };
  const bytesOf = (lines: Line[], stream: string) =>
    Buffer.concat(lines.filter((l) => l.type === 'chunk' && l.stream === stream).map((l) => Buffer.from(l.data_b64!, 'base64')));
  /** Whether the process whose pid the command wrote to /tmp/<name> still runs in the VM. */
  const stillRuns = async (name: string) => (await exec(sh(`kill -0 "$(cat /tmp/${name})" 2>/dev/null && echo running || echo gone`))).json.stdout.trim();

  it('sync: a command printing endlessly is stopped at the limit; the answer keeps exactly the limit, the note and 137', async () => {
    const res = await exec(sh('echo $$ > /tmp/sync-pid; exec yes'));
    expect(res.status).toBe(200);
    expect(res.json.exit_code).toBe(137);
    expect(res.json.stdout).toBe('y\n'.repeat(LIMIT / 2));
    expect(res.json.stderr).toBe(NOTE);
    expect(await stillRuns('sync-pid')).toBe('gone');
  }, 120_000);

  it('stream: chunks of at most 64 KiB, the limit exactly, the note on stderr and an exit of 137', async () => {
    const lines = await ndjson(`/api/v1/vm/${vm}/exec/stream`, sh('echo $$ > /tmp/stream-pid; head -c 300000 /dev/zero >&2; exec yes'));
    const chunks = lines.filter((l) => l.type === 'chunk');
    for (const chunk of chunks) expect(Buffer.from(chunk.data_b64!, 'base64').length).toBeLessThanOrEqual(CHUNK_MAX);
    expect(lines.map((l) => l.cursor)).toEqual(lines.map((_, i) => i + 1));
    const stdout = bytesOf(lines, 'stdout');
    const stderr = bytesOf(lines, 'stderr');
    // Both streams count: 300000 bytes of stderr, the rest of the limit on stdout, then the note.
    expect(stderr.subarray(0, 300000).equals(Buffer.alloc(300000))).toBe(true);
    expect(stderr.subarray(300000).toString()).toBe(NOTE);
    expect(stdout.length).toBe(LIMIT - 300000);
    expect(lines[lines.length - 1]).toMatchObject({ type: 'exit', exit_code: 137 });
    expect(await stillRuns('stream-pid')).toBe('gone');
  }, 120_000);

  it('logs show the note where the output was cut off', async () => {
    const exec_id = randomUUID();
    expect((await exec(sh('exec yes', { exec_id }))).json.exit_code).toBe(137);
    const entries: { exec_id: string; stream: string; data_b64: string }[] = [];
    for (let offset = 0, eof = false; !eof; ) {
      const page = (await arbor.request('GET', `/api/v1/vm/${vm}/logs?stream=stderr&offset=${offset}&max_entries=1000`)).json;
      entries.push(...page.entries);
      offset = page.next_offset;
      eof = page.eof;
    }
    const mine = entries.filter((e) => e.exec_id === exec_id);
    expect(Buffer.concat(mine.map((e) => Buffer.from(e.data_b64, 'base64'))).toString()).toBe(NOTE);
  }, 120_000);

  it('output within the limit is untouched', async () => {
    const res = await exec(sh(`head -c ${LIMIT} /dev/zero | tr '\\0' x`));
    expect({ exit_code: res.json.exit_code, length: res.json.stdout.length, stderr: res.json.stderr }).toEqual({ exit_code: 0, length: LIMIT, stderr: '' });
  }, 120_000);

  it("exec ids are the org's: two orgs use one id without meeting, and neither sees the other's", async () => {
    const other = await issueKeyForNewOrg(arbor.infra.eventStore);
    const theirVm = await arbor.bootVm({ mem_size_mib: 256 }, { key: other.key });
    const exec_id = randomUUID();
    expect((await exec(sh('echo ours', { exec_id }))).json).toEqual({ exit_code: 0, stdout: 'ours\n', stderr: '', exec_id });
    // The same id in another org: no conflict, its own output.
    expect((await exec(sh('echo theirs', { exec_id }), theirVm, other.key)).json).toEqual({ exit_code: 0, stdout: 'theirs\n', stderr: '', exec_id });
    // Each org attaches to its own exec of that id.
    const attach = (target: string, key: string) => ndjson(`/api/v1/vm/${target}/exec/stream/attach`, { exec_id, cursor: 0 }, key);
    expect(bytesOf(await attach(vm, arbor.adminKey), 'stdout').toString()).toBe('ours\n');
    expect(bytesOf(await attach(theirVm, other.key), 'stdout').toString()).toBe('theirs\n');
    // Within an org the id stays taken.
    expect((await exec(sh('true', { exec_id }))).status).toBe(409);
    // An id only one org used is, to the other, like an id nobody used.
    const onlyOurs = randomUUID();
    expect((await exec(sh('true', { exec_id: onlyOurs }))).status).toBe(200);
    const foreign = await arbor.request('POST', `/api/v1/vm/${theirVm}/exec/stream/attach`, { key: other.key, body: { exec_id: onlyOurs, cursor: 0 } });
    const nobodys = await arbor.request('POST', `/api/v1/vm/${theirVm}/exec/stream/attach`, { key: other.key, body: { exec_id: randomUUID(), cursor: 0 } });
    expect({ status: foreign.status, body: foreign.json }).toEqual({ status: nobodys.status, body: nobodys.json });
    expect(foreign.status).toBe(404);
  }, 300_000);
});
