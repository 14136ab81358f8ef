import { spawn } from 'node:child_process';
import type { GitHost } from './deploy-config';

export interface GitRun {
  /** null: killed (timed out, over a bound, or asked to stop). */
  exitCode: number | null;
  stdout: Buffer;
  /** What git said, credentials scrubbed, at most a few KiB (the end of it, where git says why). */
  stderr: string;
  timedOut: boolean;
}

export interface GitRunOptions {
  cwd?: string;
  timeoutMs: number;
  /** stdout beyond this is a failure (the process is killed). */
  maxStdoutBytes?: number;
  signal?: AbortSignal;
}

const STDERR_KEPT = 4096;

/**
 * Runs git against the configured host as untrusted input asks: never from the caller's
 * environment (the process's secrets stay out of it), no system or user config, no prompts, no
 * hooks, only http(s), every object checked as it arrives (`transfer.fsckObjects`), LFS left as
 * pointers. Credentials travel as an Authorization header scoped to the host's URL, in the child's
 * environment (never on its command line, which other users of the host can read), and are
 * scrubbed from whatever git says.
 */
export function runGit(host: GitHost, args: string[], options: GitRunOptions): Promise<GitRun> {
  const config: [string, string][] = [
    ['core.hooksPath', '/dev/null'],
    ['protocol.allow', 'never'],
    ['protocol.http.allow', 'always'],
    ['protocol.https.allow', 'always'],
    ['transfer.fsckObjects', 'true'],
    ['submodule.recurse', 'false'],
    ['credential.helper', ''],
  ];
  const secrets: string[] = [];
  if (host.credentials) {
    const basic = Buffer.from(`${host.credentials.username}:${host.credentials.token}`).toString('base64');
    config.push([`http.${host.baseUrl}/.extraHeader`, `Authorization: Basic ${basic}`]);
    secrets.push(host.credentials.token, basic);
  }
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: '/nonexistent',
    LANG: 'C',
    LC_ALL: 'C',
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_LFS_SKIP_SMUDGE: '1',
    GIT_ASKPASS: '/bin/false',
    SSH_ASKPASS: '/bin/false',
    GIT_CONFIG_COUNT: String(config.length),
    ...Object.fromEntries(config.flatMap(([key, value], index) => [[`GIT_CONFIG_KEY_${index}`, key], [`GIT_CONFIG_VALUE_${index}`, value]])),
  };
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const stdout: Buffer[] = [];
    let stdoutBytes = 0;
    let stderr = '';
    let timedOut = false;
    let overflowed = false;
    // detached: git and its helpers (remote-https, index-pack) are one process group, stopped together.
    const kill = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, options.timeoutMs);
    const onAbort = () => kill();
    options.signal?.addEventListener('abort', onAbort);
    child.stdout.on('data', (chunk: Buffer) => {
      stdoutBytes += chunk.length;
      if (options.maxStdoutBytes !== undefined && stdoutBytes > options.maxStdoutBytes) {
        overflowed = true;
        kill();
        return;
      }
      stdout.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_KEPT * 2)));
    child.on('error', (error) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      reject(new Error(`git could not be run: ${(error as Error).message} (is git installed?)`));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      const said = scrub(stderr, secrets).trim().slice(-STDERR_KEPT);
      resolve({
        exitCode: timedOut || overflowed ? null : code,
        stdout: Buffer.concat(stdout),
        stderr: overflowed ? `${said}\ngit's answer was longer than ${options.maxStdoutBytes} bytes`.trim() : said,
        timedOut,
      });
    });
  });
}

/** The URL of a repository on the host (no credentials: they go in a header). */
export const repositoryUrl = (host: GitHost, repo: string): string => `${host.baseUrl}/${repo}.git`;

function scrub(text: string, secrets: string[]): string {
  return secrets.reduce((scrubbed, secret) => scrubbed.split(secret).join('[redacted]'), text);
}

/** The last line git said, which names why it failed ("fatal: …"), for messages to people. */
export function gitReason(run: GitRun): string {
  const lines = run.stderr.split('\n').map((line) => line.trim()).filter(Boolean);
  const fatal = lines.filter((line) => /^(fatal|error):/.test(line));
  return (fatal.length ? fatal.join('; ') : lines[lines.length - 1]) ?? `git exited with code ${run.exitCode}`;
}
