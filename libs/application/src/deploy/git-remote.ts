import { DomainError, failed, notFound } from '@arbor/domain';
import type { GitHost } from './deploy-config';
import { gitReason, repositoryUrl, runGit } from './git-command';

/** A branch of a repository on the git host, and the commit at its head. */
export interface RemoteBranch {
  branch: string;
  commit_sha: string;
}

/** What git hosts answer for a repository that is missing or not readable with Arbor's credentials (GitHub answers 401 to hide private ones). */
const NOT_THERE = /repository .* not found|not found|could not read username|authentication failed|returned error: 40[134]|terminal prompts disabled|access denied|permission denied/i;

/**
 * Asks the git host (`git ls-remote`, one round trip, no objects) for the branch's head, or the
 * default branch's when none is named: a deploy of a repository or branch that does not exist is
 * refused before anything is made (404). A host that cannot be reached is a 500 saying so.
 */
export async function resolveRemoteBranch(host: GitHost, repo: string, branch: string | null, timeoutMs: number): Promise<RemoteBranch> {
  const url = repositoryUrl(host, repo);
  const args = branch === null ? ['ls-remote', '--symref', '--', url, 'HEAD'] : ['ls-remote', '--', url, `refs/heads/${branch}`];
  const run = await runGit(host, args, { timeoutMs, maxStdoutBytes: 64 * 1024 });
  if (run.timedOut) throw failed(`the git host did not answer within ${timeoutMs / 1000} s (${host.baseUrl})`);
  if (run.exitCode !== 0) {
    const reason = gitReason(run);
    if (NOT_THERE.test(reason)) throw new DomainError('not_found', `repository ${repo} not found on ${host.baseUrl}`);
    throw failed(`the git host could not be asked about ${repo}: ${reason}`);
  }
  const lines = run.stdout.toString('utf8').split('\n').filter(Boolean);
  if (branch === null) {
    const symref = lines.map((line) => /^ref: refs\/heads\/(\S+)\tHEAD$/.exec(line)).find(Boolean);
    const head = lines.map((line) => /^([0-9a-f]{40,64})\tHEAD$/.exec(line)).find(Boolean);
    if (!symref || !head) throw notFound(`default branch of repository ${repo} (is it empty?)`);
    return { branch: symref[1], commit_sha: head[1] };
  }
  const match = lines.map((line) => /^([0-9a-f]{40,64})\trefs\/heads\/(.+)$/.exec(line)).find((m) => m?.[2] === branch);
  if (!match) throw notFound(`branch ${branch} of repository ${repo}`);
  return { branch, commit_sha: match[1] };
}
