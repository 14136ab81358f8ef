import { Inject, Injectable } from '@nestjs/common';
import { AggregateRepository } from '@arbor/application';
import { ApiKey, CustomDomain, Image, orgCommitId, Repository, repositoryTag, Tag, UUID_PATTERN, Webhook } from '@arbor/domain';
import type { RecordedEvent } from '@arbor/event-store';
import { COMMITS_COLLECTION, DOMAINS_COLLECTION, READ_MODEL_STORE, VMS_COLLECTION, type CommitDocument, type DomainDocument, type ReadModelStore, type VmDocument } from '@arbor/read-models';
import type { ChangedResource } from './changed-resource';

/** A resource of the caller's org, named for messages, and the user who owns it (null: no member's). */
export interface OwnedResource {
  what: string;
  owner_user_id: string | null;
}

/**
 * Who owns a resource: the user of the key that created it. VMs and commits record that key as
 * their `owner_id`; tags, repositories, repository tags, webhooks and domains have it as the
 * `actor_key_id` of the event that created them (the fork saga writes its steps as the key that
 * asked for the fork); an API key is its own user's. Null for a resource the caller's org does
 * not have: the handler answers for it as before (404, or the contract's 403 for a VM deletion).
 */
@Injectable()
export class ResourceOwners {
  /** Key → user never changes: kept for the life of the process. */
  private readonly users = new Map<string, string | null>();

  constructor(
    private readonly aggregates: AggregateRepository,
    @Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore,
  ) {}

  async of(kind: ChangedResource, org_id: string, params: Record<string, string>): Promise<OwnedResource | null> {
    switch (kind) {
      case 'vm':
        return this.vm(org_id, params.vm_id);
      case 'vm_or_commit':
        return this.vm(org_id, params.vm_or_commit_id);
      case 'commit': {
        // The id is the org's name for the commit: its own chosen id first, else the id in the log (see CommitReadModel).
        const own = orgCommitId(org_id, params.commit_id);
        const found = await this.readModels.find<CommitDocument>(COMMITS_COLLECTION, { _id: { $in: [own, params.commit_id] }, org_id, deleted_at: null });
        const commit = found.find((c) => c._id === own) ?? found[0];
        return commit ? { what: 'commit', owner_user_id: await this.userOfKey(commit.owner_id) } : null;
      }
      case 'commit_tag': {
        const { state, recorded } = await this.aggregates.load(Tag, { org_id, tag_name: params.tag_name });
        return state.exists ? this.createdBy('commit tag', lastOf(recorded, 'TagCreated')) : null;
      }
      case 'repository': {
        const { state, recorded } = await this.aggregates.load(Repository, { org_id, name: params.repo_name });
        return state.repo_id !== null ? this.createdBy('repository', lastOf(recorded, 'RepositoryCreated')) : null;
      }
      case 'repo_tag': {
        const { state, recorded } = await this.aggregates.load(Repository, { org_id, name: params.repo_name });
        const tag = repositoryTag(state, params.tag_name);
        return tag ? this.createdBy('repository tag', lastOf(recorded, 'RepoTagCreated', (data) => data.tag_id === tag.tag_id)) : null;
      }
      case 'webhook': {
        const { state, recorded } = await this.aggregates.load(Webhook, params.webhook_id);
        return state.webhook?.org_id === org_id && !state.deleted ? this.createdBy('webhook', lastOf(recorded, 'WebhookRegistered')) : null;
      }
      case 'api_key': {
        const { state } = await this.aggregates.load(ApiKey, params.key_id);
        return state.key?.org_id === org_id ? { what: 'API key', owner_user_id: state.key.user_id } : null;
      }
      case 'domain': {
        const domain = await this.readModels.findOne<DomainDocument>(DOMAINS_COLLECTION, { _id: params.domain_id, org_id });
        if (!domain) return null;
        const { recorded } = await this.aggregates.load(CustomDomain, domain.domain);
        return this.createdBy('domain', lastOf(recorded, 'DomainAdded', (data) => data.domain_id === domain.domain_id));
      }
      case 'image': {
        // The path's id is checked after the guards (a bad one is the handler's 400).
        const image_id = params.base_image_id?.toLowerCase() ?? '';
        if (!UUID_PATTERN.test(image_id)) return null;
        const { state } = await this.aggregates.load(Image, image_id);
        return state.org_id === org_id && state.status !== 'deleted' ? { what: 'image', owner_user_id: await this.userOfKey(state.owner_id) } : null;
      }
    }
  }

  private async vm(org_id: string, vm_id: string): Promise<OwnedResource | null> {
    const vm = await this.readModels.findOne<VmDocument>(VMS_COLLECTION, { _id: vm_id, org_id });
    return vm && !vm.deleted_at ? { what: 'vm', owner_user_id: await this.userOfKey(vm.owner_id) } : null;
  }

  private async createdBy(what: string, created: RecordedEvent | undefined): Promise<OwnedResource> {
    return { what, owner_user_id: await this.userOfKey(created?.metadata.actor_key_id ?? null) };
  }

  private async userOfKey(key_id: string | null): Promise<string | null> {
    if (!key_id) return null;
    if (!this.users.has(key_id)) this.users.set(key_id, (await this.aggregates.load(ApiKey, key_id)).state.key?.user_id ?? null);
    return this.users.get(key_id)!;
  }
}

/** The last event of `type` in a stream (a name can be created, deleted and created again). */
function lastOf(recorded: RecordedEvent[], type: string, match: (data: any) => boolean = () => true): RecordedEvent | undefined {
  return [...recorded].reverse().find((event) => event.type === type && match(event.data));
}
