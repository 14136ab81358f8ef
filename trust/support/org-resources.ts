import { randomUUID } from 'node:crypto';
import type { ApiAnswer, RequestOptions } from '../../test/support/api-client';
import type { Operation } from './openapi-operations';
import { TRUST_DEPLOY_REPO } from './trust-git-host';

/** One of each kind of resource an org can have, made through the API with one key. */
export interface OrgResources {
  key: string;
  orgName: string;
  vm: string;
  /** A finished exec on `vm`. */
  exec: string;
  /** A commit of `vm`, private, under an id the client chose (so an org's own name for it: see orgCommitId). */
  commit: string;
  /** A commit tag on `commit`. */
  tag: string;
  /** A repository with the tag `repoTag` on `commit`, public or private as asked. */
  repo: string;
  repoTag: string;
  webhook: string;
  /** An env var of the key. */
  envVar: string;
  /** A custom domain of `vm`. */
  domain: string;
  /** A second API key of the org (its id). */
  apiKey: string;
  /** An invited member of the org (their user id). */
  member: string;
  /** A deployed project of TRUST_DEPLOY_REPO (ready; its VM is `projectVm`). */
  project: string;
  projectVm: string;
  /** An image job of the org (from a registry that does not resolve: it fails soon) and its name. */
  image: string;
  imageName: string;
}

type Request = (method: string, path: string, options?: RequestOptions) => Promise<ApiAnswer>;

/**
 * Boots a VM and makes a finished exec, a commit, a commit tag, a repository with a tag, a webhook,
 * an env var, a domain, a spare key, an invited member and a deployed project (the api must clone
 * from startTrustGitHost's host), every name starting with `prefix`, so two orgs' resources never share a name.
 */
export async function makeOrgResources(request: Request, options: { key: string; orgName: string; prefix: string; publicRepo: boolean }): Promise<OrgResources> {
  const { key, prefix } = options;
  const made = async (method: string, path: string, body: unknown): Promise<any> => {
    const res = await request(method, path, { key, body });
    if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${res.text}`);
    return res.json;
  };
  const { vm_id: vm } = await made('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: { mem_size_mib: 256 } });
  const exec = randomUUID();
  await made('POST', `/api/v1/vm/${vm}/exec`, { command: ['echo', prefix], exec_id: exec });
  const { commit_id: commit } = await made('POST', `/api/v1/vm/${vm}/commit`, { commit_id: randomUUID() });
  const [tag, repo, repoTag, envVar] = [`${prefix}-tag`, `${prefix}-repo`, `${prefix}-rtag`, `${prefix.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_VAR`];
  await made('POST', '/api/v1/commit_tags', { tag_name: tag, commit_id: commit });
  await made('POST', '/api/v1/repositories', { name: repo });
  await made('POST', `/api/v1/repositories/${repo}/tags`, { tag_name: repoTag, commit_id: commit });
  if (options.publicRepo) await made('PATCH', `/api/v1/repositories/${repo}/visibility`, { is_public: true });
  const { webhook_id: webhook } = await made('POST', '/arbor/v1/webhooks', { url: 'http://127.0.0.1:9/trust', event_types: ['RepoForked'] });
  await made('PUT', '/api/v1/env_vars', { vars: { [envVar]: '1' } });
  const label = prefix.toLowerCase().replace(/[^a-z0-9]/g, '-');
  const { domain_id: domain } = await made('POST', '/api/v1/domains', { vm_id: vm, domain: `${label}-${randomUUID().slice(0, 8)}.trust.example.com` });
  const { api_key_id: apiKey } = await made('POST', '/arbor/v1/keys', { label: `${label} spare key` });
  const { user_id: member } = await made('POST', '/arbor/v1/org/members', { email: `${label}-${randomUUID().slice(0, 8)}@trust.example.com`, role: 'member' });
  const { project_id: project, vm_id: projectVm } = await made('POST', '/api/v1/deploy', { repo: TRUST_DEPLOY_REPO, name: `${label}-project` });
  // Settled before the suite starts, so no deploy is under way while it probes.
  for (let status = ''; status !== 'ready'; await new Promise((r) => setTimeout(r, 100))) {
    status = (await made('GET', `/arbor/v1/projects/${project}`, undefined)).status;
    if (['failed', 'deleted'].includes(status)) throw new Error(`the trust project ${project} ended ${status}`);
  }
  const imageName = `${label}-image`;
  const { job_id: image } = await made('POST', '/api/v1/images/create', { image_name: imageName, source: { type: 'docker', image_ref: 'registry.invalid/trust/none:v1' } });
  return { key, orgName: options.orgName, vm, exec, commit, tag, repo, repoTag, webhook, envVar, domain, apiKey, member, project, projectVm, image, imageName };
}

/** The value of a path parameter that names one of `resources` (repositories' tags in repository routes). */
export function pathValueOf(resources: OrgResources, operation: Operation, name: string): string {
  const inRepository = operation.path.includes('/repositories/');
  const value = {
    vm_id: resources.vm,
    vm_or_commit_id: resources.vm,
    commit_id: resources.commit,
    webhook_id: resources.webhook,
    tag_name: inRepository ? resources.repoTag : resources.tag,
    repo_name: resources.repo,
    org_name: resources.orgName,
    key: resources.envVar,
    domain_id: resources.domain,
    key_id: resources.apiKey,
    user_id: resources.member,
    project_id: resources.project,
    base_image_id: resources.image,
    image_name: resources.imageName,
  }[name];
  if (value === undefined) throw new Error(`no resource for path parameter ${name} of ${operation.id}`);
  return value;
}

/** Valid values of the query parameters an operation requires. */
export function requiredQueryOf(operation: Operation): Record<string, string> {
  const query: Record<string, string> = {};
  for (const { name, in: where, required } of operation.parameters) {
    if (where !== 'query' || !required) continue;
    if (name === 'image_name') {
      query.image_name = `trust-${randomUUID().slice(0, 8)}`;
      continue;
    }
    if (name !== 'path') throw new Error(`no value for the required query parameter ${name} of ${operation.id}`);
    query.path = '/etc/hostname';
  }
  return query;
}

/**
 * The fields a valid body of each request schema needs beyond what a sample of the schema gives
 * (null: leave the field out). Creations name new things; references name `resources`.
 */
export function validBodyFields(resources: OrgResources, schemaName: string | null): Record<string, unknown> {
  const { commit, exec, orgName, repo, repoTag } = resources;
  const bodies: Record<string, Record<string, unknown>> = {
    NewRootRequestDto: { vm_config: { mem_size_mib: 256, vcpu_count: 1, fs_size_mib: 512, image_name: 'default', kernel_name: 'default.bin', labels: { trust: 'yes' } } },
    FromCommitVmRequestDto: { commit_id: commit, tag_name: null, ref: null },
    VmCommitRequestDto: { commit_id: null, name: 'trust', description: 'trust' },
    UpdateVmStateRequestDto: { state: 'Running' },
    ResizeVmDiskRequestDto: { fs_size_mib: 2048 },
    UpdateVmLabelsRequestDto: { labels: { trust: 'yes' } },
    UpdateCommitRequestDto: { is_public: false, name: 'trust', description: 'trust' },
    CreateCommitTagRequestDto: { tag_name: 'trust-new-tag', commit_id: commit, description: 'trust' },
    UpdateCommitTagRequestDto: { commit_id: commit, description: 'trust' },
    CreateRepositoryRequestDto: { name: 'trust-new-repo', description: 'trust' },
    ForkRepositoryRequestDto: { source_org: orgName, source_repo: repo, source_tag: repoTag, repo_name: 'trust-forked', tag_name: null },
    SetRepositoryVisibilityRequestDto: { is_public: true },
    CreateRepoTagRequestDto: { tag_name: 'trust-new-tag', commit_id: commit, description: 'trust' },
    UpdateRepoTagRequestDto: { commit_id: commit, description: 'trust' },
    VmExecRequestDto: { command: ['true'], env: { TRUST: '1' }, working_dir: '/', stdin: '', timeout_secs: 30, exec_id: null },
    VmExecStreamAttachRequestDto: { exec_id: exec, cursor: 0, from_latest: false },
    VmWriteFileRequestDto: { path: '/tmp/trust-file', content_b64: 'dHJ1c3Q=', mode: 420, create_dirs: false },
    SetEnvVarsRequestDto: { vars: { [resources.envVar]: '1' }, replace: false },
    RegisterWebhookRequestDto: { url: 'http://127.0.0.1:9/trust', event_types: ['RepoForked'], description: 'trust' },
    DeployRequestDto: { repo: TRUST_DEPLOY_REPO, name: null, branch: null, settings: null },
  };
  return schemaName ? (bodies[schemaName] ?? {}) : {};
}

/** The VMs a successful answer says it made (new_root, from_commit, fork: vm_id; branches: vms). */
export function vmsMadeBy(json: any): string[] {
  if (!json || typeof json !== 'object') return [];
  const ids = [typeof json.vm_id === 'string' ? json.vm_id : null, ...(Array.isArray(json.vms) ? json.vms.map((vm: any) => vm?.vm_id) : [])];
  return ids.filter((id): id is string => typeof id === 'string');
}
