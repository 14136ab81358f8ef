import { lstatSync, mkdirSync, readlinkSync, type Stats } from 'node:fs';
import { UnsafeArchiveError } from './unsafe-archive-error';

/** How many symbolic links one lookup follows before it gives up (as the kernel's ELOOP). */
const MAX_LINKS_FOLLOWED = 40;

/**
 * The components of an archive entry's name inside the root filesystem: a leading `/` or `./` is
 * dropped (GNU tar and every image tool do the same: archives of a root are often made from `/`),
 * `.` components vanish and `..` goes one up; a name that climbs above the root is refused.
 */
export function entryComponents(name: string, what = 'entry'): string[] {
  const components: string[] = [];
  for (const part of name.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (components.length === 0) throw new UnsafeArchiveError(`${what} '${name}' points outside the root filesystem`);
      components.pop();
      continue;
    }
    if (part.includes('\0')) throw new UnsafeArchiveError(`${what} '${name}' holds a NUL byte`);
    components.push(part);
  }
  return components;
}

/**
 * What is at `path` itself (a link is not followed), or null when nothing is. Without an error for
 * a missing name: most names an extraction asks about do not exist yet, and an ENOENT error (its
 * message and stack) cost more than the system call.
 */
export function lstatOrNull(path: string): Stats | null {
  return lstatSync(path, { throwIfNoEntry: false }) ?? null;
}

/**
 * Finds directories inside a root filesystem being written, the way the root's own programs will
 * see them: a symbolic link on the way is followed *within the root* (an absolute target starts
 * at the root, `..` stops at it, as in a chroot), never out to the host. So an archive that plants
 * `etc -> /etc` and then writes `etc/passwd` writes the image's `/etc/passwd`, not the host's.
 * Resolved directories are cached; `forget()` after anything is removed or replaced.
 */
export class RootScopedPaths {
  private readonly directories = new Map<string, string>();

  constructor(readonly root: string) {}

  forget(): void {
    this.directories.clear();
  }

  /** The host path of the directory `components` names in the root, made (0755) where missing. */
  directory(components: readonly string[], entryName: string): string {
    const key = components.join('/');
    const cached = this.directories.get(key);
    if (cached !== undefined) return cached;
    const real = this.walk(components, entryName, { followed: 0 });
    this.directories.set(key, real.path);
    return real.path;
  }

  /** Components of the real directory (relative to the root), after following links within the root. */
  private walk(components: readonly string[], entryName: string, budget: { followed: number }): { path: string; parts: string[] } {
    const parts: string[] = [];
    const queue = [...components];
    while (queue.length > 0) {
      const part = queue.shift()!;
      if (part === '.' || part === '') continue;
      if (part === '..') {
        parts.pop(); // at the root, `..` is the root
        continue;
      }
      const path = `${this.root}/${[...parts, part].join('/')}`;
      const stats = lstatOrNull(path);
      if (stats === null) {
        mkdirSync(path, { mode: 0o755 });
        parts.push(part);
      } else if (stats.isDirectory()) {
        parts.push(part);
      } else if (stats.isSymbolicLink()) {
        if (++budget.followed > MAX_LINKS_FOLLOWED) throw new UnsafeArchiveError(`entry '${entryName}': too many levels of symbolic links`);
        const target = readlinkSync(path);
        if (target.startsWith('/')) parts.length = 0;
        queue.unshift(...target.split('/'));
      } else {
        throw new UnsafeArchiveError(`entry '${entryName}': '${[...parts, part].join('/')}' is not a directory`);
      }
    }
    return { path: parts.length === 0 ? this.root : `${this.root}/${parts.join('/')}`, parts };
  }
}
