import { readFileSync } from 'node:fs';
import { positiveSetting } from '../settings';

/** The git host deploys clone from, and how Arbor signs in to it. */
export interface GitHost {
  /** `ARBOR_GIT_BASE_URL` (http or https, no credentials, no trailing slash): a repository is `<base>/<owner>/<repo>.git`. */
  baseUrl: string;
  /** Basic credentials sent to that host only (a token as the password); null: anonymous. */
  credentials: { username: string; token: string } | null;
}

/** How deploys clone and run (README: Configuration). */
export interface DeployConfig {
  git: GitHost;
  /** The most a repository may hold, as fetched and as checked out (ARBOR_DEPLOY_MAX_REPO_MIB). */
  maxRepoBytes: number;
  /** The most files (and directories, links) its tree may hold. */
  maxFiles: number;
  /** How long the clone may take, fetch and checkout together (ARBOR_DEPLOY_CLONE_TIMEOUT_SECS). */
  cloneTimeoutMs: number;
  /** How long `git ls-remote` may take when a deploy is asked for. */
  lsRemoteTimeoutMs: number;
  /** How long the install and build commands may each run before they are stopped (ARBOR_DEPLOY_STEP_TIMEOUT_SECS). */
  stepTimeoutSecs: number;
  /** How long the run command must stay up before the project is `running` (ARBOR_DEPLOY_START_SECS). */
  startGraceMs: number;
}

const MIB = 1024 * 1024;

export function loadDeployConfig(env: NodeJS.ProcessEnv = process.env): DeployConfig {
  return {
    git: { baseUrl: gitBaseUrl(env.ARBOR_GIT_BASE_URL || 'https://github.com'), credentials: gitCredentials(env) },
    maxRepoBytes: positiveSetting(env, 'ARBOR_DEPLOY_MAX_REPO_MIB', 512) * MIB,
    maxFiles: 100_000,
    cloneTimeoutMs: positiveSetting(env, 'ARBOR_DEPLOY_CLONE_TIMEOUT_SECS', 300) * 1000,
    lsRemoteTimeoutMs: 30_000,
    stepTimeoutSecs: positiveSetting(env, 'ARBOR_DEPLOY_STEP_TIMEOUT_SECS', 1800),
    startGraceMs: positiveSetting(env, 'ARBOR_DEPLOY_START_SECS', 3) * 1000,
  };
}

function gitBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`ARBOR_GIT_BASE_URL must be an http(s) URL (got "${raw}")`);
  }
  if (!['http:', 'https:'].includes(url.protocol)) throw new Error(`ARBOR_GIT_BASE_URL must be an http(s) URL (got "${raw}")`);
  if (url.username || url.password) throw new Error('ARBOR_GIT_BASE_URL must not hold credentials: set ARBOR_GIT_USERNAME and ARBOR_GIT_TOKEN');
  if (url.search || url.hash) throw new Error(`ARBOR_GIT_BASE_URL must have no query or fragment (got "${raw}")`);
  return url.toString().replace(/\/+$/, '');
}

/** ARBOR_GIT_TOKEN, or the file ARBOR_GIT_TOKEN_FILE names (Docker secrets); the user defaults to GitHub's `x-access-token`. */
function gitCredentials(env: NodeJS.ProcessEnv): GitHost['credentials'] {
  let token = env.ARBOR_GIT_TOKEN ?? '';
  const file = env.ARBOR_GIT_TOKEN_FILE;
  if (!token && file) {
    try {
      token = readFileSync(file, 'utf8').trim();
    } catch (error) {
      throw new Error(`ARBOR_GIT_TOKEN_FILE names ${file}, which cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
  }
  if (!token) {
    if (env.ARBOR_GIT_USERNAME) throw new Error('ARBOR_GIT_USERNAME is set without ARBOR_GIT_TOKEN (or ARBOR_GIT_TOKEN_FILE)');
    return null;
  }
  if (/[\r\n]/.test(token) || /[\r\n:]/.test(env.ARBOR_GIT_USERNAME ?? '')) throw new Error('ARBOR_GIT_USERNAME and ARBOR_GIT_TOKEN must be single lines (and the user holds no ":")');
  return { username: env.ARBOR_GIT_USERNAME || 'x-access-token', token };
}
