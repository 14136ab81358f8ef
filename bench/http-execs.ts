import { Agent } from 'node:http';
import { answerInChildProcess, askChildProcess } from './child-process';
import { httpText } from './http-client';

const EXECS_FLAG = '--execs';

/** A block of execs one after another on one VM, each timed by the client. */
export interface ExecBlock {
  baseUrl: string;
  key: string;
  vm_id: string;
  command: string[];
  /** 'sync': POST /exec until its whole answer; 'stream': POST /exec/stream until its first chunk line. */
  kind: 'sync' | 'stream';
  count: number;
}

/**
 * Runs the block in a process of its own, on one kept-alive connection warmed up by one exec of
 * the same kind first (not measured): a user's client is elsewhere, so its HTTP work must not
 * share the service's event loop. Resolves to each exec's milliseconds; throws on any answer but
 * 200 or an exit code but 0.
 */
export function execInOtherProcess(block: ExecBlock): Promise<number[]> {
  return askChildProcess<number[]>(__filename, EXECS_FLAG, block);
}

async function execs({ baseUrl, key, vm_id, command, kind, count }: ExecBlock): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, noDelay: true, maxSockets: 1 });
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const path = kind === 'sync' ? `/api/v1/vm/${vm_id}/exec` : `/api/v1/vm/${vm_id}/exec/stream`;
  const body = JSON.stringify({ command });
  const once = async (): Promise<number> => {
    const start = process.hrtime.bigint();
    let firstLineMs: number | null = null;
    // A stream's first chunk line has arrived once a line of type chunk is complete.
    const onText = kind === 'stream' ? (text: string) => void (firstLineMs ??= /"type":"chunk"[^\n]*\n/.test(text) ? Number(process.hrtime.bigint() - start) / 1e6 : null) : undefined;
    const answer = await httpText(agent, baseUrl + path, { method: 'POST', headers, body, onText });
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (answer.status !== 200) throw new Error(`POST ${path}: ${answer.status} ${answer.body}`);
    if (kind === 'sync') {
      if ((JSON.parse(answer.body) as { exit_code: number }).exit_code !== 0) throw new Error(`POST ${path}: ${answer.body}`);
      return ms;
    }
    if (!/"exit_code":0/.test(answer.body)) throw new Error(`POST ${path}: ${answer.body}`);
    if (firstLineMs === null) throw new Error(`no chunk line in ${answer.body}`);
    return firstLineMs;
  };
  await once();
  const times: number[] = [];
  for (let i = 0; i < count; i++) times.push(await once());
  agent.destroy();
  return times;
}

answerInChildProcess(EXECS_FLAG, execs);
