import { Agent } from 'node:http';
import { answerInChildProcess, askChildProcess } from './child-process';
import { httpText } from './http-client';

const READERS_FLAG = '--readers';

/** One reader's requests: its headers and the paths it GETs one after another. */
export interface ReaderPlan {
  headers: Record<string, string>;
  /** Read first, by every reader, and not measured: connections opened, code paths compiled. */
  warmUp: { kind: string; path: string }[];
  reads: { kind: string; path: string }[];
}

/** What a round of readers measured: each kind's latencies (ms), and how long the round took. */
export interface ReadRound {
  samples: Record<string, number[]>;
  seconds: number;
}

/**
 * Runs every reader at once, each GETting its paths one after another (its warm-up first, then,
 * once every reader is warm, the measured ones), in a process of its own:
 * a real service's clients are elsewhere, so their HTTP work must not share the service's event
 * loop (on this machine it takes the other core). Throws on any answer but 200.
 */
export function readInOtherProcess(baseUrl: string, readers: ReaderPlan[]): Promise<ReadRound> {
  return askChildProcess<ReadRound>(__filename, READERS_FLAG, { baseUrl, readers });
}

async function read(baseUrl: string, readers: ReaderPlan[]): Promise<ReadRound> {
  const agent = new Agent({ keepAlive: true, noDelay: true });
  const samples: Record<string, number[]> = {};
  const get = async (path: string, headers: Record<string, string>) => {
    const { status, body } = await httpText(agent, baseUrl + path, { headers });
    if (status !== 200) throw new Error(`GET ${path}: ${status} ${body}`);
  };
  await Promise.all(readers.map(async ({ headers, warmUp }) => { for (const { path } of warmUp) await get(path, headers); }));
  const started = process.hrtime.bigint();
  await Promise.all(
    readers.map(async ({ headers, reads }) => {
      for (const { kind, path } of reads) {
        const start = process.hrtime.bigint();
        await get(path, headers);
        (samples[kind] ??= []).push(Number(process.hrtime.bigint() - start) / 1e6);
      }
    }),
  );
  agent.destroy();
  return { samples, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
}

answerInChildProcess(READERS_FLAG, ({ baseUrl, readers }: { baseUrl: string; readers: ReaderPlan[] }) => read(baseUrl, readers));
