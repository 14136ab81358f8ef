import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The folder holding Arbor's package.json, from source (ts) or build (dist) alike. */
export function projectRoot(from: string = __dirname): string {
  let dir = from;
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${from}`);
    dir = parent;
  }
  return dir;
}
