import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DomainError } from '@arbor/domain';
import { GitHttpServer } from '../../../../test/support/git-http-server';
import { loadDeployConfig, type DeployConfig } from './deploy-config';
import { CloneError, cloneBranch } from './git-clone';
import { resolveRemoteBranch } from './git-remote';

const MIB = 1024 * 1024;

async function refusal(run: Promise<unknown>): Promise<Error> {
  return run.then(
    () => {
      throw new Error('expected a refusal');
    },
    (error: Error) => error,
  );
}

describe('the git host a deploy clones from (git http-backend on a local port)', () => {
  let host: GitHttpServer;
  let config: DeployConfig;
  let work: string;
  let main: string;

  beforeAll(async () => {
    host = await GitHttpServer.start();
    config = loadDeployConfig({ ARBOR_GIT_BASE_URL: host.url });
    main = host.commit('acme/app', { 'README.md': 'hello\n', 'bin/run.sh': { content: '#!/bin/sh\necho run\n', mode: 0o755 } }, 'main');
    host.commit('acme/app', { 'README.md': 'the feature\n' }, 'feature/x');
    work = mkdtempSync(join(tmpdir(), 'arbor-clone-'));
  });
  afterAll(async () => {
    await host.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it('finds the default branch and its head, or a named branch; a missing repository or branch is not found', async () => {
    expect(await resolveRemoteBranch(config.git, 'acme/app', null, 10_000)).toEqual({ branch: 'main', commit_sha: main });
    expect((await resolveRemoteBranch(config.git, 'acme/app', 'feature/x', 10_000)).branch).toBe('feature/x');
    const missingRepo = await refusal(resolveRemoteBranch(config.git, 'acme/nope', null, 10_000));
    expect([missingRepo instanceof DomainError && missingRepo.kind, missingRepo.message]).toEqual(['not_found', `repository acme/nope not found on ${host.url}`]);
    const missingBranch = await refusal(resolveRemoteBranch(config.git, 'acme/app', 'nope', 10_000));
    expect([missingBranch instanceof DomainError && missingBranch.kind, missingBranch.message]).toEqual(['not_found', 'branch nope of repository acme/app not found']);
  });

  it('a host that cannot be reached is a failure saying so, not a missing repository', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise((resolve) => closed.close(resolve));
    const error = await refusal(resolveRemoteBranch(loadDeployConfig({ ARBOR_GIT_BASE_URL: `http://127.0.0.1:${port}` }).git, 'acme/app', null, 10_000));
    expect([(error as DomainError).kind, error.message]).toEqual(['failed', expect.stringMatching(/^the git host could not be asked about acme\/app: fatal: unable to access/)]);
  });

  it("clones one branch's head, shallow, with its modes, and measures it", async () => {
    const dir = join(work, 'app');
    const tree = await cloneBranch(config, 'acme/app', 'main', dir);
    expect(tree).toEqual({ commit_sha: main, files: 3, bytes: expect.any(Number) });
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toBe('hello\n');
    expect(statSync(join(dir, 'bin/run.sh')).mode & 0o777).toBe(0o755);
    expect(readFileSync(join(dir, '.git/shallow'), 'utf8').trim()).toBe(main);
    // No hooks come with a clone (no template), and only the branch asked for is there.
    expect(existsSync(join(dir, '.git/hooks'))).toBe(false);
    expect(readFileSync(join(dir, '.git/HEAD'), 'utf8').trim()).toBe('ref: refs/heads/main');
  });

  it('refuses a repository over the size bound: a large fetch is stopped, a small pack of a huge tree is never checked out', async () => {
    const bounded = { ...config, maxRepoBytes: 1 * MIB };
    host.commit('acme/big', { 'noise.bin': { content: randomBytes(3 * MIB) } });
    const big = await refusal(cloneBranch(bounded, 'acme/big', 'main', join(work, 'big')));
    expect([big instanceof CloneError, big.message]).toEqual([true, 'repository acme/big is larger than 1 MiB (ARBOR_DEPLOY_MAX_REPO_MIB)']);
    // 16 MiB of zeros: a pack of a few KiB.
    host.commit('acme/bomb', { 'zeros.bin': { content: Buffer.alloc(16 * MIB) } });
    const bomb = await refusal(cloneBranch(bounded, 'acme/bomb', 'main', join(work, 'bomb')));
    expect(bomb.message).toMatch(/^repository acme\/bomb checks out to 17 MiB, more than 1 MiB/);
    expect(existsSync(join(work, 'bomb', 'zeros.bin'))).toBe(false);
  });

  it('refuses a tree of too many files, and names a missing branch', async () => {
    host.commit('acme/many', Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`f${i}`, 'x'])));
    expect((await refusal(cloneBranch({ ...config, maxFiles: 20 }, 'acme/many', 'main', join(work, 'many')))).message).toBe('repository acme/many holds 30 files, more than 20');
    expect((await refusal(cloneBranch(config, 'acme/app', 'gone', join(work, 'gone')))).message).toMatch(/^cloning acme\/app \(branch gone\) failed: fatal: Remote branch gone not found/);
  });
});

describe('a git host that wants credentials', () => {
  const credentials = { username: 'deployer', token: 'ghp_s3cr3t-token-value' };
  let host: GitHttpServer;

  beforeAll(async () => {
    host = await GitHttpServer.start({ credentials });
    host.commit('acme/private', { 'README.md': 'private\n' });
  });
  afterAll(() => host.stop());

  it('is asked with ARBOR_GIT_USERNAME/ARBOR_GIT_TOKEN (Basic, in a header); without them the repository is not found', async () => {
    const signedIn = loadDeployConfig({ ARBOR_GIT_BASE_URL: host.url, ARBOR_GIT_USERNAME: 'deployer', ARBOR_GIT_TOKEN: credentials.token });
    expect((await resolveRemoteBranch(signedIn.git, 'acme/private', null, 10_000)).branch).toBe('main');
    const anonymous = await refusal(resolveRemoteBranch(loadDeployConfig({ ARBOR_GIT_BASE_URL: host.url }).git, 'acme/private', null, 10_000));
    expect((anonymous as DomainError).kind).toBe('not_found');
    const dir = mkdtempSync(join(tmpdir(), 'arbor-clone-'));
    try {
      expect((await cloneBranch(signedIn, 'acme/private', 'main', join(dir, 'p'))).files).toBe(1);
      // The token never stays in the clone's configuration.
      expect(readFileSync(join(dir, 'p/.git/config'), 'utf8')).not.toContain(credentials.token);
      const wrong = loadDeployConfig({ ARBOR_GIT_BASE_URL: host.url, ARBOR_GIT_TOKEN: 'wrong-token' });
      const error = await refusal(cloneBranch(wrong, 'acme/private', 'main', join(dir, 'w')));
      expect(error.message).not.toContain('wrong-token');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses configurations that would leak or break: credentials in the URL, a user without a token', () => {
    expect(() => loadDeployConfig({ ARBOR_GIT_BASE_URL: 'https://u:p@github.com' })).toThrow('ARBOR_GIT_BASE_URL must not hold credentials');
    expect(() => loadDeployConfig({ ARBOR_GIT_BASE_URL: 'file:///srv/git' })).toThrow('ARBOR_GIT_BASE_URL must be an http(s) URL');
    expect(() => loadDeployConfig({ ARBOR_GIT_USERNAME: 'x' })).toThrow('ARBOR_GIT_USERNAME is set without ARBOR_GIT_TOKEN');
    expect(loadDeployConfig({}).git).toEqual({ baseUrl: 'https://github.com', credentials: null });
  });
});
