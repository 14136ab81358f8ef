import { Agent, request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { answerInChildProcess, askChildProcess } from './child-process';
import { timed } from './stats';

const GETS_FLAG = '--gets';

/** One kind of GET: where to, with which Host, over TLS or not, on a kept-alive connection or a fresh one each time. */
export interface GetTarget {
  host?: string;
  port: number;
  hostHeader: string;
  tls?: { servername: string; ca: string };
  /** One connection kept alive for the whole series (otherwise a fresh connection per GET). */
  keepAlive?: boolean;
}

/** One GET, on a fresh connection unless an agent keeps one alive: what a client pays to reach a VM's port. */
function get(target: GetTarget, agent: Agent | false): Promise<void> {
  return new Promise((resolve, reject) => {
    const common = { host: target.host ?? '127.0.0.1', port: target.port, path: '/', headers: { host: target.hostHeader }, agent };
    const onResponse = (res: IncomingMessage) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`))));
    };
    const req = target.tls ? httpsRequest({ ...common, servername: target.tls.servername, ca: target.tls.ca }, onResponse) : httpRequest(common, onResponse);
    req.once('error', reject).end();
  });
}

/**
 * Times each of the series `rounds` times, interleaved (one sample of each per round), so the
 * load of a shared machine weighs on every series alike and their ratios hold. Each round takes
 * the series in a new random order: in a fixed one, each series always followed the same other,
 * and paid for what that one left behind (its connections' closing), 5–7% of a fresh GET (two
 * identical bare proxies measured 1.05–1.07× apart in set orders, 1.00–1.01× shuffled).
 */
export async function interleaved<K extends string>(rounds: number, series: Record<K, () => Promise<unknown>>): Promise<Record<K, number[]>> {
  const names = Object.keys(series) as K[];
  for (const name of names) for (let i = 0; i < 5; i++) await series[name](); // warm up
  const out = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<K, number[]>;
  for (let i = 0; i < rounds; i++) {
    for (const name of shuffled(names)) out[name].push((await timed(series[name]))[1]);
  }
  return out;
}

/** A copy of `items` in a random order (Fisher–Yates). */
function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/**
 * GET series timed as `interleaved` does, by a client in a process of its own: a user's client is
 * elsewhere, and one in the service's own process put its HTTP work on the event loop of the edge
 * it measured (and of the bare proxy beside it), adding to both what a second process does alongside.
 */
export function interleavedGets<K extends string>(rounds: number, series: Record<K, GetTarget>): Promise<Record<K, number[]>> {
  return askChildProcess<Record<K, number[]>>(__filename, GETS_FLAG, { rounds, series });
}

answerInChildProcess(GETS_FLAG, async ({ rounds, series }: { rounds: number; series: Record<string, GetTarget> }) => {
  const agents: Agent[] = [];
  const calls = Object.fromEntries(
    Object.entries(series).map(([name, target]) => {
      const agent = target.keepAlive ? new Agent({ keepAlive: true, maxSockets: 1 }) : false;
      if (agent) agents.push(agent);
      return [name, () => get(target, agent)];
    }),
  );
  try {
    return await interleaved(rounds, calls);
  } finally {
    agents.forEach((agent) => agent.destroy());
  }
});
