import { readFile } from 'node:fs/promises';
import { runCommand } from './run-command';

/** /proc/mounts escapes blanks and backslashes as octal (\040 …). */
function unescapeMountPath(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/** A mount in this mount namespace: what is mounted (a device, or the file system's name) and where. */
export interface MountEntry {
  source: string;
  point: string;
}

/** Every mount of this mount namespace, in mount order. */
export async function mountTable(): Promise<MountEntry[]> {
  const table = await readFile('/proc/mounts', 'utf8');
  return table
    .split('\n')
    .map((line) => line.split(' '))
    .filter((fields) => fields.length > 1)
    .map(([source, point]) => ({ source: unescapeMountPath(source), point: unescapeMountPath(point) }));
}

/** Mount points at or below any of `dirs` in this mount namespace, deepest first (the order to unmount). */
export async function mountsUnder(...dirs: string[]): Promise<string[]> {
  const under = (point: string) => dirs.some((dir) => point === dir || point.startsWith(`${dir}/`));
  const points = (await mountTable()).map((entry) => entry.point).filter(under);
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

/**
 * Unmounts everything at or below each of `dirs`; lazily, so a busy mount never blocks a cleanup.
 * One umount a round for all of them (it takes its targets in order and goes on past a failure);
 * mounts stacked on one point take a round each.
 */
export async function unmountAllUnder(...dirs: string[]): Promise<void> {
  for (let round = 0; round < 5; round++) {
    const points = await mountsUnder(...dirs);
    if (points.length === 0) return;
    await runCommand('umount', ['--lazy', ...points]).catch(() => undefined);
  }
  const left = await mountsUnder(...dirs);
  if (left.length > 0) throw new Error(`could not unmount ${left.join(', ')}`);
}
