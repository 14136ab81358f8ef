import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';

/** A host process named by PID plus start time, so a recycled PID is never mistaken for it. */
export interface ProcessIdentity {
  pid: number;
  startTime: string;
}

interface ProcStat {
  state: string;
  ppid: number;
  startTime: string;
}

/**
 * Parses /proc/<pid>/stat; the command name may hold spaces and parentheses, so split after the
 * last ')'. Read synchronously: the kernel answers in microseconds, and Node's thread pool may be
 * busy with disk fsyncs for much longer (a machine's status is asked for very often).
 */
export async function readProcStat(pid: number): Promise<ProcStat | null> {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state) of proc(5); start time is field 22.
  return { state: fields[0], ppid: Number(fields[1]), startTime: fields[19] };
}

export async function identify(pid: number): Promise<ProcessIdentity | null> {
  const stat = await readProcStat(pid);
  return stat ? { pid, startTime: stat.startTime } : null;
}

/** True while the very same process runs (not exited, not a zombie waiting to be reaped). */
export async function isAlive(identity: ProcessIdentity): Promise<boolean> {
  const stat = await readProcStat(identity.pid);
  return stat !== null && stat.startTime === identity.startTime && stat.state !== 'Z' && stat.state !== 'X';
}

/** Host PIDs of the direct children of `pid`. */
export async function childrenOf(pid: number): Promise<number[]> {
  const text = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
  return text.split(' ').filter(Boolean).map(Number);
}
