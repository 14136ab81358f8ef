import { invalid } from '../shared/domain-error';

/** What a deploy runs in its VM, each step optional (an empty string is the same as none). */
export interface DeploySettings {
  install_command: string | null;
  build_command: string | null;
  run_command: string | null;
  /** Relative to the repository's root; null: the root itself. */
  working_directory: string | null;
}

/** A repository on the configured git host: `<owner>/<repo>`. */
export interface RepositoryRef {
  owner: string;
  repo: string;
}

/** One segment of `owner/repo`: safe in a URL path and as a directory name, as git hosts name them. */
const SEGMENT = /^[A-Za-z0-9._-]{1,100}$/;
/** The most a command may hold (it is a shell command line, run with `sh -c`). */
const COMMAND_MAX_LENGTH = 8192;

/**
 * `owner/repo` (a trailing `.git` is dropped): letters, digits, ".", "_" and "-", neither segment
 * starting with "-" nor being "." or "..", so it names a path on the git host and a directory in
 * the VM without escaping either.
 */
export function requireRepositoryRef(value: string): RepositoryRef {
  const parts = value.replace(/\.git$/, '').split('/');
  const ok = parts.length === 2 && parts.every((part) => SEGMENT.test(part) && !part.startsWith('-') && part !== '.' && part !== '..');
  if (!ok) throw invalid(`repo must be "owner/repo" (letters, digits, ".", "_" and "-"), got ${JSON.stringify(value)}`);
  return { owner: parts[0], repo: parts[1] };
}

/** A branch name as `git check-ref-format --branch` takes it, so it can be passed to git as it is. */
export function requireBranchName(branch: string): string {
  const broken =
    branch.length === 0 ||
    branch.length > 255 ||
    /[\x00-\x20\x7f~^:?*[\\]/.test(branch) ||
    branch.startsWith('-') ||
    branch.startsWith('/') ||
    branch.endsWith('/') ||
    branch.endsWith('.') ||
    branch.includes('..') ||
    branch.includes('//') ||
    branch.includes('@{') ||
    branch === '@' ||
    branch.split('/').some((part) => part.startsWith('.') || part.endsWith('.lock'));
  if (broken) throw invalid(`branch ${JSON.stringify(branch)} is not a valid git branch name`);
  return branch;
}

/**
 * The settings as a deploy keeps them: blank commands are none; a command holds no NUL and at
 * most 8192 characters; `working_directory` is a path inside the repository (relative, no "..").
 */
export function requireDeploySettings(settings: Partial<Record<keyof DeploySettings, string | null>> | null | undefined): DeploySettings {
  const command = (field: keyof DeploySettings): string | null => {
    const value = settings?.[field];
    if (value === null || value === undefined || value.trim() === '') return null;
    if (value.includes('\0')) throw invalid(`settings.${field} must not contain NUL characters`);
    if (value.length > COMMAND_MAX_LENGTH) throw invalid(`settings.${field} is longer than ${COMMAND_MAX_LENGTH} characters`);
    return value;
  };
  return {
    install_command: command('install_command'),
    build_command: command('build_command'),
    run_command: command('run_command'),
    working_directory: requireWorkingDirectory(settings?.working_directory ?? null),
  };
}

/** A directory of the repository: relative, normalized ("./a//b/" is "a/b"), never above its root. */
function requireWorkingDirectory(value: string | null): string | null {
  if (value === null || value.trim() === '') return null;
  if (value.startsWith('/')) throw invalid('settings.working_directory is relative to the repository\'s root (it must not start with "/")');
  if (/[\x00-\x1f\x7f]/.test(value) || value.length > 1024) throw invalid('settings.working_directory must be a path of at most 1024 characters, without control characters');
  const parts = value.split('/').filter((part) => part !== '' && part !== '.');
  if (parts.includes('..')) throw invalid('settings.working_directory must stay inside the repository (no "..")');
  return parts.length ? parts.join('/') : null;
}

/** Where a repository's files go in the deploy's VM. */
export const projectDirectory = (repo: RepositoryRef): string => `/root/${repo.repo}`;
