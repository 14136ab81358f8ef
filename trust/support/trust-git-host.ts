import { GitHttpServer } from '../../test/support/git-http-server';

/** The repository every org of the trust suite deploys (and the fuzzer's deploys name). */
export const TRUST_DEPLOY_REPO = 'trust/app';

/** A git host on a local port holding TRUST_DEPLOY_REPO: what ARBOR_GIT_BASE_URL points at for the suite. */
export async function startTrustGitHost(): Promise<GitHttpServer> {
  const host = await GitHttpServer.start();
  host.commit(TRUST_DEPLOY_REPO, { 'README.md': 'deployed by the trust suite\n' });
  return host;
}
