import type { RecordedEvent } from '@arbor/event-store';
import { startApiProcess, type ApiProcess } from '../support/api-process';
import { issueKeyForNewOrg } from '../support/issue-key';
import { SseFollower } from '../support/sse-client';
import { appendVmLives, EVENTS_PER_VM } from '../support/vm-history';

const HEARTBEAT_MS = 200;

/** `GET /api/v1/events/stream`: following the log live over SSE, across api restarts, behind the org wall. */
describe('event stream (SSE, api as its own process)', () => {
  let api: ApiProcess;
  let orgA: { key: string; org_id: string };
  let orgB: { key: string; org_id: string };
  const followers: SseFollower[] = [];
  const follow = (query: string, key: string, lastEventId?: string) => {
    const follower = new SseFollower(`${api.url}/api/v1/events/stream${query}`, { key, lastEventId });
    followers.push(follower);
    return follower;
  };
  const positionsOf = (follower: SseFollower) => follower.messages.map((message) => Number(message.id));
  const readLog = async (after: number) => api.store.readAll({ after_position: after });

  beforeAll(async () => {
    api = await startApiProcess({ ARBOR_SSE_HEARTBEAT_MS: String(HEARTBEAT_MS) });
    orgA = await issueKeyForNewOrg(api.store);
    orgB = await issueKeyForNewOrg(api.store);
  });
  afterEach(async () => {
    await Promise.all(followers.splice(0).map((follower) => follower.close()));
  });
  afterAll(() => api?.stop());

  it('delivers every event exactly once, in order, across a SIGKILL of the api, resuming with Last-Event-ID', async () => {
    const start = await api.store.headPosition();
    const follower = follow('', api.adminKey, String(start));
    await follower.until((f) => f.connections.includes(200));
    // Three rounds of VM lives (2 orgs × 50 VMs × 9 events each): the api is killed in the middle of
    // the first two, while the appends go on, and restarted.
    const vms = 50;
    const perRound = 2 * vms * EVENTS_PER_VM;
    for (let round = 1; round <= 3; round++) {
      const appending = appendVmLives(api.store, [orgA.org_id, orgB.org_id], vms);
      if (round < 3) {
        await follower.until((f) => f.messages.length >= (round - 1) * perRound + perRound / 3);
        await api.restart('SIGKILL');
      }
      await appending;
    }

    const expected = (await readLog(start)).map((event) => event.position);
    expect(expected).toHaveLength(3 * perRound);
    await follower.until((f) => f.messages.length >= expected.length);
    expect(positionsOf(follower)).toEqual(expected);
    // It really was cut off twice, and came back each time.
    expect(follower.connections.filter((status) => status === 200).length).toBeGreaterThanOrEqual(3);
    const items = follower.messages.map((message) => JSON.parse(message.data));
    expect(items.map((item) => item.position)).toEqual(expected);
    expect(follower.messages.map((message) => message.event)).toEqual(items.map((item) => item.type));
  }, 180_000);

  it("shows a key only its own org's events, filtered by type, stream and category as asked", async () => {
    const start = await api.store.headPosition();
    const [ownVm] = await appendVmLives(api.store, [orgB.org_id], 1);
    const all = follow(`?after=${start}`, orgB.key);
    const typed = follow(`?after=${start}&type=VmBooted&type=VmDeleted,VmPaused`, orgB.key);
    const oneStream = follow(`?after=${start}&stream=vm-${ownVm}`, orgB.key);
    const category = follow(`?after=${start}&category=vm`, orgB.key);
    const foreign = follow(`?after=${start}&stream=vm-${ownVm}`, orgA.key);
    await appendVmLives(api.store, [orgA.org_id, orgB.org_id], 5);

    const log = await readLog(start);
    const ofB = log.filter((event) => event.metadata.org_id === orgB.org_id);
    const expect$ = async (follower: SseFollower, events: RecordedEvent[]) => {
      await follower.until((f) => f.messages.length >= events.length);
      await new Promise((resolve) => setTimeout(resolve, 3 * HEARTBEAT_MS)); // nothing more comes
      expect(positionsOf(follower)).toEqual(events.map((event) => event.position));
    };
    await expect$(all, ofB);
    await expect$(typed, ofB.filter((event) => ['VmBooted', 'VmDeleted', 'VmPaused'].includes(event.type)));
    await expect$(oneStream, ofB.filter((event) => event.stream_id === `vm-${ownVm}`));
    await expect$(category, ofB.filter((event) => event.stream_id.startsWith('vm-')));
    // Another org's key never sees a foreign event, even when it names the foreign stream.
    expect(foreign.messages).toEqual([]);
    expect(all.messages.every((message) => JSON.parse(message.data).metadata.org_id === orgB.org_id)).toBe(true);
  }, 120_000);

  it('keeps a quiet stream alive with heartbeats, an unknown type matches nothing, and passed-over events move Last-Event-ID', async () => {
    const start = await api.store.headPosition();
    const quiet = follow(`?after=${start}&type=NoSuchEventType`, api.adminKey);
    await quiet.until((f) => f.comments.filter((comment) => comment === 'heartbeat').length >= 2);
    await appendVmLives(api.store, [orgA.org_id], 1);
    const head = await api.store.headPosition();
    // The heartbeat after the passed-over events carries their last position as its id.
    await quiet.until((f) => f.lastEventId === String(head), 10_000);
    await new Promise((resolve) => setTimeout(resolve, 3 * HEARTBEAT_MS));
    expect(quiet.messages).toEqual([]);
    expect(quiet.connections).toEqual([200]); // still the first connection: it stayed open
  });

  it('refuses a malformed resume point or filter, and an unknown key', async () => {
    const stream = '/api/v1/events/stream';
    expect((await api.request('GET', stream, { headers: { 'last-event-id': 'abc' } })).status).toBe(400);
    expect((await api.request('GET', `${stream}?after=-2`)).status).toBe(400);
    expect((await api.request('GET', `${stream}?after=x`)).status).toBe(400);
    expect((await api.request('GET', stream, { key: null })).status).toBe(401);
  });
});
