import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import { projectRoot } from '@arbor/application';

export interface BuildInfo {
  version: string;
  git_hash: string;
}

const ROOT = projectRoot();

/**
 * The running build's version and git hash: `build-info.json` written by `npm run build` (for
 * code running from dist/), else GIT_HASH from the environment, else asked of git in the checkout.
 */
export function readBuildInfo(): BuildInfo {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  // build-info.json describes the build in dist/; code running from source asks git instead.
  const file = join(ROOT, 'dist', 'build-info.json');
  if (__dirname.includes(`${sep}dist${sep}`) && existsSync(file)) {
    const info = JSON.parse(readFileSync(file, 'utf8')) as Partial<BuildInfo>;
    if (info.git_hash) return { version: pkg.version, git_hash: info.git_hash };
  }
  if (process.env.GIT_HASH) return { version: pkg.version, git_hash: process.env.GIT_HASH };
  try {
    const hash = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
    return { version: pkg.version, git_hash: hash };
  } catch {
    return { version: pkg.version, git_hash: 'unknown' };
  }
}
