import { readdirSync, readFileSync } from 'node:fs';
import { sleep } from '../host/sleep';

/** Host processes, as the driver specs' cleanup checks see them (from /proc). */

function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** A process counts as gone once it no longer exists or is only a zombie awaiting its parent. */
export function isRunning(pid: number): boolean {
  const fields = statFields(pid);
  return fields !== null && !/^[ZX]$/.test(fields[0]);
}

/** The PIDs among `pids` still running after up to 5 s. */
export async function waitUntilGone(pids: number[]): Promise<number[]> {
  for (let attempt = 0; attempt < 50; attempt++) {
    if (pids.every((pid) => !isRunning(pid))) return [];
    await sleep(100);
  }
  return pids.filter(isRunning);
}

/** Every process whose ancestor is `pid`, now (an orphan's ancestry ends when it is re-parented). */
export function descendantsOf(pid: number): number[] {
  const parentOf = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const fields = statFields(Number(name));
    if (fields) parentOf.set(Number(name), Number(fields[1]));
  }
  const found: number[] = [];
  let frontier = [pid];
  while (frontier.length > 0) {
    const children = [...parentOf].filter(([, parent]) => frontier.includes(parent)).map(([child]) => child);
    found.push(...children);
    frontier = children;
  }
  return found;
}

/** Loop devices (by name) whose backing file lies under `dir`, wherever in it. */
export function loopDevicesUnder(dir: string): string[] {
  return readdirSync('/sys/block')
    .filter((name) => name.startsWith('loop'))
    .filter((name) => {
      try {
        return readFileSync(`/sys/block/${name}/loop/backing_file`, 'utf8').startsWith(`${dir}/`);
      } catch {
        return false; // not attached
      }
    });
}
