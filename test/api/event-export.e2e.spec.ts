import { readFileSync } from 'node:fs';
import { get, type IncomingMessage } from 'node:http';
import { newCommandContext, toNewEvents } from '@arbor/application';
import { Vm, type VmLabelsSet } from '@arbor/domain';
import type { EventStore } from '@arbor/event-store';
import { startApiProcess, type ApiProcess } from '../support/api-process';
import { issueKeyForNewOrg } from '../support/issue-key';
import { appendVmCreation, appendVmLives } from '../support/vm-history';

type Item = { position: number; type: string; stream_id: string; created_at: string; metadata: { org_id: string | null } };

/** `GET /api/v1/events/export`: NDJSON of a position or time range, streamed, behind the org wall. */
describe('event export (NDJSON, api as its own process)', () => {
  let api: ApiProcess;
  let orgA: { key: string; org_id: string };
  let orgB: { key: string; org_id: string };
  /** Bounds of three batches of VM lives, appended a little apart in time. */
  const batches: { after: number; until: number }[] = [];

  const exportOf = async (query: string, key = api.adminKey): Promise<{ items: Item[]; until: string | null }> => {
    const res = await api.request('GET', `/api/v1/events/export${query}`, { key });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-ndjson');
    const lines = res.text.split('\n');
    expect(lines.pop()).toBe(''); // every line ends with a newline
    return { items: lines.map((line) => JSON.parse(line)), until: res.headers.get('arbor-export-until') };
  };
  /** The feed's pages from `after` to `until` (inclusive), as a client pages them. */
  const feedPages = async (after: number, until: number, key = api.adminKey, type?: string): Promise<Item[]> => {
    const items: Item[] = [];
    for (let cursor = after; ; ) {
      const page = (await api.request('GET', `/api/v1/events?after=${cursor}&limit=1000${type ? `&type=${type}` : ''}`, { key })).json;
      items.push(...page.events);
      cursor = page.next_after;
      if (!page.has_more || cursor >= until) break;
    }
    return items.filter((item) => item.position <= until);
  };

  beforeAll(async () => {
    api = await startApiProcess();
    orgA = await issueKeyForNewOrg(api.store);
    orgB = await issueKeyForNewOrg(api.store);
    for (let batch = 0; batch < 3; batch++) {
      const after = await api.store.headPosition();
      await appendVmLives(api.store, [orgA.org_id, orgB.org_id], 10);
      batches.push({ after, until: await api.store.headPosition() });
      await new Promise((resolve) => setTimeout(resolve, 20)); // the next batch is recorded later
    }
  });
  afterAll(() => api?.stop());

  it('exports a position range (after exclusive, until inclusive) exactly as the feed pages it', async () => {
    const { after } = batches[1];
    const { until } = batches[2];
    const exported = await exportOf(`?after=${after}&until=${until}`);
    expect(exported.items).toEqual(await feedPages(after, until));
    expect(exported.items[0].position).toBe(after + 1);
    expect(exported.until).toBe(String(until));
    // Without bounds: the whole log up to its head as the export started.
    const head = await api.store.headPosition();
    const whole = await exportOf('');
    expect(whole.items).toEqual(await feedPages(-1, head));
    expect(whole.until).toBe(String(head));
  });

  it('exports a time range (since inclusive, before exclusive) exactly as the feed shows it', async () => {
    const log = await feedPages(-1, await api.store.headPosition());
    const since = log.find((item) => item.position > batches[1].after)!.created_at;
    const before = log.find((item) => item.position > batches[2].after)!.created_at;
    const inRange = log.filter((item) => item.created_at >= since && item.created_at < before);
    expect(inRange.length).toBeGreaterThan(100);
    expect((await exportOf(`?since=${since}&before=${before}`)).items).toEqual(inRange);
    // Times and positions together, and a time without an offset taken as UTC.
    const until = batches[1].until - 10;
    expect((await exportOf(`?since=${since.replace('Z', '')}&until=${until}`)).items).toEqual(inRange.filter((item) => item.position <= until));
    expect((await exportOf(`?before=${since}`)).items).toEqual(log.filter((item) => item.created_at < since));
  });

  it("keeps to the caller's org, and filters by type, stream and category like the feed", async () => {
    const head = await api.store.headPosition();
    const ofB = await feedPages(-1, head, orgB.key);
    expect(ofB.every((item) => item.metadata.org_id === orgB.org_id)).toBe(true);
    expect((await exportOf('', orgB.key)).items).toEqual(ofB);
    expect((await exportOf('?type=VmBooted', orgB.key)).items).toEqual(await feedPages(-1, head, orgB.key, 'VmBooted'));
    const stream = ofB.find((item) => item.type === 'VmBooted')!.stream_id;
    expect((await exportOf(`?stream=${stream}&type=VmBooted,VmDeleted`, orgB.key)).items).toEqual(
      ofB.filter((item) => item.stream_id === stream && ['VmBooted', 'VmDeleted'].includes(item.type)),
    );
    expect((await exportOf('?category=org,apikey', orgB.key)).items).toEqual(ofB.filter((item) => /^(org|apikey)-/.test(item.stream_id)));
    // A foreign stream named outright still shows nothing.
    expect((await exportOf(`?stream=${stream}`, orgA.key)).items).toEqual([]);
  });

  it('refuses malformed ranges', async () => {
    for (const query of ['since=yesterday', 'before=2025-13-01T00:00:00Z', 'after=-2', 'until=x']) {
      expect((await api.request('GET', `/api/v1/events/export?${query}`)).status).toBe(400);
    }
    expect((await api.request('GET', '/api/v1/events/export', { key: null })).status).toBe(401);
  });

  it('streams a large range at the pace of a slow reader: the api does not hold the range in memory', async () => {
    const count = 20_000;
    const labelBytes = 8 * 1024; // ~170 MB of NDJSON in all
    const start = await api.store.headPosition();
    await appendLabelChanges(api.store, orgA.org_id, count, labelBytes);
    const pid = api.process().child.pid!;
    const baseline = rssOf(pid);

    // A connection of its own (agent: false): the appends above outlast the server's keep-alive
    // timeout, and a pooled connection from an earlier test may be closing just as it is reused.
    const response = await new Promise<IncomingMessage>((resolve, reject) =>
      get(`${api.url}/api/v1/events/export?after=${start}`, { agent: false, headers: { authorization: `Bearer ${api.adminKey}` } }, resolve).on('error', reject),
    );
    const reader: AsyncIterator<Buffer> = response[Symbol.asyncIterator]();
    const first = await reader.next(); // the first lines come before the range could have been read
    expect(first.done).toBe(false);
    // Stop reading: a paced export waits for the socket; one that buffered would hold it all now.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const paused = rssOf(pid);
    let bytes = first.value.length;
    let lines = countLines(first.value);
    for (let chunk = await reader.next(); !chunk.done; chunk = await reader.next()) {
      bytes += chunk.value.length;
      lines += countLines(chunk.value);
    }
    expect(lines).toBe(count + 1); // the VM's creation and its label changes
    expect(bytes).toBeGreaterThan(count * labelBytes);
    expect(paused - baseline).toBeLessThan(64 * 2 ** 20);
  }, 120_000);
});

/** One VM of `org_id`, then `count` label changes of it (`bytes` each), appended in batches of a thousand. */
async function appendLabelChanges(store: EventStore, org_id: string, count: number, bytes: number): Promise<void> {
  const vm_id = await appendVmCreation(store, org_id);
  const labels = { note: 'x'.repeat(bytes) };
  let revision = (await store.readStream(Vm.stream(vm_id))).length - 1;
  for (let done = 0; done < count; done += 1000) {
    const events: VmLabelsSet[] = Array.from({ length: Math.min(1000, count - done) }, () => ({ type: 'VmLabelsSet', data: { vm_id, labels } }));
    revision = (await store.append(Vm.stream(vm_id), toNewEvents(events, newCommandContext({ org_id, actor_key_id: null })), revision)).next_expected_revision;
  }
}

function rssOf(pid: number): number {
  const kib = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1];
  return Number(kib) * 1024;
}

function countLines(chunk: Uint8Array): number {
  let lines = 0;
  for (const byte of chunk) if (byte === 0x0a) lines++;
  return lines;
}
