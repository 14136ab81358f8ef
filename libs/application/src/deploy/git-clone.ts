import { lstat, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { DeployConfig } from './deploy-config';
import { gitReason, repositoryUrl, runGit, type GitRun } from './git-command';

/** What a clone holds: the commit checked out, its files (directories and links included) and their bytes. */
export interface ClonedTree {
  commit_sha: string;
  files: number;
  bytes: number;
}

/** A clone that could not be made, with the reason a person reads (credentials never in it). */
export class CloneError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CloneError';
  }
}

const MIB = 1024 * 1024;

/**
 * Clones one branch of a repository into `dir` (made here, empty) as untrusted input: shallow (its
 * head only), that branch only, no tags, no submodules, no hooks, no LFS, every object checked.
 * Bounded: the fetch is stopped once it has written more than `maxRepoBytes`, the tree is measured
 * from the commit (`ls-tree`) before anything is checked out, so a small pack that would unpack
 * into a huge tree (or a million files) is refused without writing it, and the whole clone
 * stops at `cloneTimeoutMs`.
 */
export async function cloneBranch(config: Pick<DeployConfig, 'git' | 'maxRepoBytes' | 'maxFiles' | 'cloneTimeoutMs'>, repo: string, branch: string, dir: string, signal?: AbortSignal): Promise<ClonedTree> {
  const deadline = Date.now() + config.cloneTimeoutMs;
  const left = () => Math.max(1, deadline - Date.now());
  const url = repositoryUrl(config.git, repo);
  await rm(dir, { recursive: true, force: true });

  const fetch = new AbortController();
  const stop = () => fetch.abort();
  signal?.addEventListener('abort', stop);
  let overSize = false;
  const watch = setInterval(() => {
    void sizeOf(dir).then((bytes) => {
      if (bytes > config.maxRepoBytes) {
        overSize = true;
        fetch.abort();
      }
    });
  }, 250);
  let cloned: GitRun;
  try {
    const args = ['clone', '--no-checkout', '--depth', '1', '--single-branch', '--no-tags', '--template=', '--branch', branch, '--', url, dir];
    cloned = await runGit(config.git, args, { timeoutMs: left(), signal: fetch.signal });
  } finally {
    clearInterval(watch);
    signal?.removeEventListener('abort', stop);
  }
  // Stopped by the watch, or fetched between two of its looks.
  const packed = overSize ? Infinity : await sizeOf(dir);
  if (packed > config.maxRepoBytes) throw new CloneError(`repository ${repo} is larger than ${config.maxRepoBytes / MIB} MiB (ARBOR_DEPLOY_MAX_REPO_MIB)`);
  if (signal?.aborted) throw new CloneError('the clone was stopped');
  requireDone(cloned, `cloning ${repo} (branch ${branch})`, config.cloneTimeoutMs);

  const head = await runGit(config.git, ['rev-parse', '--verify', 'HEAD^{commit}'], { cwd: dir, timeoutMs: left(), maxStdoutBytes: 1024 });
  requireDone(head, 'reading the cloned commit', config.cloneTimeoutMs);
  const tree = await runGit(config.git, ['ls-tree', '-r', '-t', '-l', '-z', '--full-tree', 'HEAD'], { cwd: dir, timeoutMs: left(), maxStdoutBytes: 64 * MIB });
  if (tree.exitCode === null && !tree.timedOut) throw new CloneError(`the tree of repository ${repo} is too large to list (more than ${config.maxFiles} files, or very long paths)`);
  requireDone(tree, 'listing the cloned tree', config.cloneTimeoutMs);
  const measured = measureTree(tree.stdout);
  if (measured.files > config.maxFiles) throw new CloneError(`repository ${repo} holds ${measured.files} files, more than ${config.maxFiles}`);
  if (measured.bytes + packed > config.maxRepoBytes) {
    throw new CloneError(`repository ${repo} checks out to ${Math.ceil((measured.bytes + packed) / MIB)} MiB, more than ${config.maxRepoBytes / MIB} MiB (ARBOR_DEPLOY_MAX_REPO_MIB)`);
  }
  const checkout = await runGit(config.git, ['reset', '--hard', '--quiet', 'HEAD'], { cwd: dir, timeoutMs: left(), signal });
  requireDone(checkout, 'checking the tree out', config.cloneTimeoutMs);
  return { commit_sha: head.stdout.toString('utf8').trim(), files: measured.files, bytes: measured.bytes + packed };
}

function requireDone(run: GitRun, what: string, timeoutMs: number): void {
  if (run.timedOut) throw new CloneError(`${what} took longer than ${timeoutMs / 1000} s (ARBOR_DEPLOY_CLONE_TIMEOUT_SECS)`);
  if (run.exitCode !== 0) throw new CloneError(`${what} failed: ${gitReason(run)}`);
}

/** Entries of `ls-tree -r -t -l -z`: `<mode> <type> <object> <size>\t<path>\0`; blobs have a size, trees and submodules "-". */
function measureTree(listing: Buffer): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  for (const entry of listing.toString('utf8').split('\0')) {
    if (!entry) continue;
    files++;
    const size = Number(entry.slice(0, entry.indexOf('\t')).trim().split(/\s+/)[3]);
    if (Number.isFinite(size)) bytes += size;
  }
  return { files, bytes };
}

/** Bytes the files under `dir` hold (a missing directory holds none). */
async function sizeOf(dir: string): Promise<number> {
  let total = 0;
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += await sizeOf(path);
    else total += (await lstat(path).catch(() => ({ size: 0 }))).size;
  }
  return total;
}
