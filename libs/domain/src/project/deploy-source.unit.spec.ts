import { DomainError } from '../shared/domain-error';
import { requireBranchName, requireDeploySettings, requireRepositoryRef } from './deploy-source';

const refusal = (run: () => unknown): string | null => {
  try {
    run();
    return null;
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).kind).toBe('invalid');
    return (error as DomainError).message;
  }
};

describe('what a deploy takes: a repository, a branch and its settings', () => {
  it('takes owner/repo (a trailing .git dropped), and nothing that could leave the path', () => {
    expect(requireRepositoryRef('acme/app')).toEqual({ owner: 'acme', repo: 'app' });
    expect(requireRepositoryRef('Acme-1/.github.git')).toEqual({ owner: 'Acme-1', repo: '.github' });
    for (const bad of ['acme', 'acme/app/x', '/app', 'acme/', '../x', 'acme/..', 'acme/-x', 'a b/c', 'acme/app?x', 'acme/app#x', 'https://github.com/acme/app', '']) {
      expect({ bad, message: refusal(() => requireRepositoryRef(bad)) }).toEqual({ bad, message: expect.stringContaining('repo must be "owner/repo"') });
    }
  });

  it('takes branch names git takes', () => {
    for (const good of ['main', 'feature/x-1', 'v1.2', 'a_b']) expect(requireBranchName(good)).toBe(good);
    for (const bad of ['', '-x', 'a..b', 'a b', 'a~1', 'a^', 'a:b', '/a', 'a/', 'a.lock', '.a', 'a/.b', 'a@{1}', '@', 'a\\b', 'x'.repeat(256)]) {
      expect({ bad, refused: refusal(() => requireBranchName(bad)) !== null }).toEqual({ bad, refused: true });
    }
  });

  it('keeps commands as given, blank ones as none, and a working directory inside the repository', () => {
    expect(requireDeploySettings(undefined)).toEqual({ install_command: null, build_command: null, run_command: null, working_directory: null });
    expect(requireDeploySettings({ install_command: 'npm ci', build_command: '  ', run_command: null, working_directory: './web//api/' })).toEqual({
      install_command: 'npm ci',
      build_command: null,
      run_command: null,
      working_directory: 'web/api',
    });
    expect(requireDeploySettings({ working_directory: '.' }).working_directory).toBeNull();
    expect(refusal(() => requireDeploySettings({ working_directory: '/srv' }))).toMatch(/relative to the repository's root/);
    expect(refusal(() => requireDeploySettings({ working_directory: 'a/../../x' }))).toMatch(/inside the repository/);
    expect(refusal(() => requireDeploySettings({ run_command: 'a\0b' }))).toMatch(/settings.run_command must not contain NUL/);
    expect(refusal(() => requireDeploySettings({ build_command: 'x'.repeat(8193) }))).toMatch(/settings.build_command is longer than 8192/);
  });
});
