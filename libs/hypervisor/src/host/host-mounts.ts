import { readFile } from 'node:fs/promises';
import { runCommand } from './run-command';

/** /proc/mounts escapes blanks and backslashes as octal (\040 …). */
function unescapeMountPath(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/** Mount points at or below `dir` in this mount namespace, deepest first (the order to unmount). */
export async function mountsUnder(dir: string): Promise<string[]> {
  const table = await readFile('/proc/mounts', 'utf8');
  const points = table
    .split('\n')
    .map((line) => line.split(' ')[1])
    .filter((field): field is string => Boolean(field))
    .map(unescapeMountPath)
    .filter((point) => point === dir || point.startsWith(`${dir}/`));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

/** Unmounts everything at or below `dir`; lazily, so a busy mount never blocks a cleanup. */
export async function unmountAllUnder(dir: string): Promise<void> {
  for (let round = 0; round < 5; round++) {
    const points = await mountsUnder(dir);
    if (points.length === 0) return;
    for (const point of points) await runCommand('umount', ['--lazy', point]).catch(() => undefined);
  }
  const left = await mountsUnder(dir);
  if (left.length > 0) throw new Error(`could not unmount ${left.join(', ')}`);
}
