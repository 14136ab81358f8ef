// Records the git hash of the build for GET /api/v1/system/version (GIT_HASH overrides, e.g. in images).
const { execFileSync } = require('node:child_process');
const { mkdirSync, writeFileSync } = require('node:fs');
let git_hash = process.env.GIT_HASH || 'unknown';
if (git_hash === 'unknown') {
  try {
    git_hash = execFileSync('git', ['rev-parse', 'HEAD'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
  } catch {
    // not a git checkout: keep "unknown"
  }
}
mkdirSync('dist', { recursive: true });
writeFileSync('dist/build-info.json', JSON.stringify({ git_hash }) + '\n');
