import { apiKeyUsageDecider } from './api-key/api-key-usage.decider';
import { API_KEY_USAGE_EVENT_TYPES } from './api-key/api-key-usage.events';
import { apiKeyDecider } from './api-key/api-key.decider';
import { API_KEY_EVENT_TYPES } from './api-key/api-key.events';
import { commitIdDecider } from './commit/commit-id.decider';
import { COMMIT_ID_EVENT_TYPES } from './commit/commit-id.events';
import { commitDecider } from './commit/commit.decider';
import { COMMIT_EVENT_TYPES } from './commit/commit.events';
import { customDomainDecider } from './custom-domain/custom-domain.decider';
import { CUSTOM_DOMAIN_EVENT_TYPES } from './custom-domain/custom-domain.events';
import { envVarsDecider } from './env-vars/env-vars.decider';
import { ENV_VARS_EVENT_TYPES } from './env-vars/env-vars.events';
import { execDecider } from './exec/exec.decider';
import { EXEC_EVENT_TYPES } from './exec/exec.events';
import { forkDecider } from './fork/fork.decider';
import { FORK_EVENT_TYPES } from './fork/fork.events';
import { forkOutcomes } from './fork/fork.outcomes';
import { guestFileDecider } from './guest-file/guest-file.decider';
import { GUEST_FILE_EVENT_TYPES } from './guest-file/guest-file.events';
import { guestFileOutcomes } from './guest-file/guest-file.outcomes';
import { imageNameDecider } from './image/image-name.decider';
import { IMAGE_NAME_EVENT_TYPES } from './image/image-name.events';
import { imageDecider } from './image/image.decider';
import { IMAGE_EVENT_TYPES } from './image/image.events';
import { imageOutcomes } from './image/image.outcomes';
import { idempotentResponseDecider } from './idempotency/idempotent-response.decider';
import { IDEMPOTENT_RESPONSE_EVENT_TYPES } from './idempotency/idempotent-response.events';
import { orgNameDecider } from './org/org-name.decider';
import { ORG_NAME_EVENT_TYPES } from './org/org-name.events';
import { orgDecider } from './org/org.decider';
import { ORG_EVENT_TYPES } from './org/org.events';
import { vmPlacementDecider } from './placement/vm-placement.decider';
import { PLACEMENT_EVENT_TYPES } from './placement/vm-placement.events';
import { repositoryDecider } from './repository/repository.decider';
import { REPOSITORY_EVENT_TYPES } from './repository/repository.events';
import { signInDecider } from './sign-in/sign-in.decider';
import { SIGN_IN_EVENT_TYPES } from './sign-in/sign-in.events';
import { sshKeyDecider } from './ssh-key/ssh-key.decider';
import { SSH_KEY_EVENT_TYPES } from './ssh-key/ssh-key.events';
import { defineAggregate, streamCategory, type AnyAggregate } from './shared/aggregate';
import { systemBootstrapDecider } from './system/system-bootstrap.decider';
import { SYSTEM_BOOTSTRAP_EVENT_TYPES } from './system/system-bootstrap.events';
import { tagDecider } from './tag/tag.decider';
import { TAG_EVENT_TYPES } from './tag/tag.events';
import { userDecider } from './user/user.decider';
import { USER_EVENT_TYPES } from './user/user.events';
import { projectNameDecider } from './project/project-name.decider';
import { PROJECT_NAME_EVENT_TYPES } from './project/project-name.events';
import { projectDecider } from './project/project.decider';
import { PROJECT_EVENT_TYPES } from './project/project.events';
import { orgUsageDecider } from './usage/org-usage.decider';
import { ORG_USAGE_EVENT_TYPES } from './usage/org-usage.events';
import { vmDecider } from './vm/vm.decider';
import { VM_EVENT_TYPES } from './vm/vm.events';
import { vmOutcomes } from './vm/vm.outcomes';
import { webhookDeliveryDecider } from './webhook/webhook-delivery.decider';
import { WEBHOOK_DELIVERY_EVENT_TYPES } from './webhook/webhook-delivery.events';
import { webhookDecider } from './webhook/webhook.decider';
import { WEBHOOK_EVENT_TYPES } from './webhook/webhook.events';

/**
 * The table of aggregates: one entry per kind, naming its streams, its decider, its events and
 * when its intents are done. A new aggregate is its events, commands and decider (and outcomes,
 * if the worker acts on it) in a folder of its own, plus one entry here.
 */

/** `vm-<id>`: a VM's life, from the request to create it to its deletion. */
export const Vm = defineAggregate({ name: 'Vm', category: 'vm', decider: vmDecider, eventTypes: VM_EVENT_TYPES, outcomes: vmOutcomes });
/** `placement-<vm id>`: the worker (host) a VM lives on; the first claim wins. */
export const VmPlacement = defineAggregate({ name: 'VmPlacement', category: 'placement', decider: vmPlacementDecider, eventTypes: PLACEMENT_EVENT_TYPES });
/** `commit-<id>`: a snapshot of a VM, and the VMs started from it. */
export const Commit = defineAggregate({ name: 'Commit', category: 'commit', decider: commitDecider, eventTypes: COMMIT_EVENT_TYPES });
/** `commitid-<id>`: a client-chosen commit id, held by the first VM asked to commit under it. */
export const CommitIdReservation = defineAggregate({ name: 'CommitIdReservation', category: 'commitid', decider: commitIdDecider, eventTypes: COMMIT_ID_EVENT_TYPES });
/** `tag-<org>-<name>`: an org's movable name for a commit; the stream is the name's reservation. */
export const Tag = defineAggregate({
  name: 'Tag',
  category: 'tag',
  decider: tagDecider,
  eventTypes: TAG_EVENT_TYPES,
  key: ({ org_id, tag_name }: { org_id: string; tag_name: string }) => `${org_id}-${tag_name}`,
});
/** `repo-<org>-<name>`: an org's repository and its tags; the stream is the name's reservation. */
export const Repository = defineAggregate({
  name: 'Repository',
  category: 'repo',
  decider: repositoryDecider,
  eventTypes: REPOSITORY_EVENT_TYPES,
  key: ({ org_id, name }: { org_id: string; name: string }) => `${org_id}-${name}`,
});
/** `fork-<id>`: a fork of a public repository tag into an org, a saga the worker drives. */
export const Fork = defineAggregate({ name: 'Fork', category: 'fork', decider: forkDecider, eventTypes: FORK_EVENT_TYPES, outcomes: forkOutcomes });
/** `project-<id>`: a git repository deployed into a VM of its own (POST /deploy), a saga the worker drives. */
export const Project = defineAggregate({ name: 'Project', category: 'project', decider: projectDecider, eventTypes: PROJECT_EVENT_TYPES });
/** `projectname-<org>-<name>`: a project name's holder in an org (unique while its project's VM exists). */
export const ProjectName = defineAggregate({
  name: 'ProjectName',
  category: 'projectname',
  decider: projectNameDecider,
  eventTypes: PROJECT_NAME_EVENT_TYPES,
  key: ({ org_id, name }: { org_id: string; name: string }) => `${org_id}-${name}`,
});
/**
 * `domain-<host name>`: a custom domain routed by the edge to a VM; the stream is the name's
 * reservation across the installation (free again once removed).
 */
export const CustomDomain = defineAggregate({ name: 'CustomDomain', category: 'domain', decider: customDomainDecider, eventTypes: CUSTOM_DOMAIN_EVENT_TYPES });
/** `image-<id>`: a base image of an org: its build job (a worker carries it out), the VMs that boot it, its deletion. */
export const Image = defineAggregate({ name: 'Image', category: 'image', decider: imageDecider, eventTypes: IMAGE_EVENT_TYPES, outcomes: imageOutcomes });
/** `imagename-<org>-<name>`: an image name's reservation in an org, held from the request until the image fails or is deleted. */
export const ImageName = defineAggregate({
  name: 'ImageName',
  category: 'imagename',
  decider: imageNameDecider,
  eventTypes: IMAGE_NAME_EVENT_TYPES,
  key: ({ org_id, image_name }: { org_id: string; image_name: string }) => `${org_id}-${image_name}`,
});
/** `envvars-<owner id>`: the env vars every new VM of a key's owner gets. */
export const EnvVars = defineAggregate({ name: 'EnvVars', category: 'envvars', decider: envVarsDecider, eventTypes: ENV_VARS_EVENT_TYPES });
/** `exec-<id>`: one command run in a VM, and its output. */
export const Exec = defineAggregate({ name: 'Exec', category: 'exec', decider: execDecider, eventTypes: EXEC_EVENT_TYPES });
/** `guestfile-<op id>`: one read or write of a file inside a VM, content included. */
export const GuestFile = defineAggregate({ name: 'GuestFile', category: 'guestfile', decider: guestFileDecider, eventTypes: GUEST_FILE_EVENT_TYPES, outcomes: guestFileOutcomes });
/** `org-<id>`: an org and its members, each with a role (owner, admin, member). */
export const Org = defineAggregate({ name: 'Org', category: 'org', decider: orgDecider, eventTypes: ORG_EVENT_TYPES });
/** `orgname-<name>`: an org name's reservation (names are unique across the installation). */
export const OrgName = defineAggregate({ name: 'OrgName', category: 'orgname', decider: orgNameDecider, eventTypes: ORG_NAME_EVENT_TYPES });
/** `usage-<org id>`: what an org holds against its quotas (VMs' shares, commits' bytes), reserved race-free. */
export const OrgUsage = defineAggregate({ name: 'OrgUsage', category: 'usage', decider: orgUsageDecider, eventTypes: ORG_USAGE_EVENT_TYPES });
/** `apikey-<key id>`: a member's API key in an org (a hash of its secret); revocable. */
export const ApiKey = defineAggregate({ name: 'ApiKey', category: 'apikey', decider: apiKeyDecider, eventTypes: API_KEY_EVENT_TYPES });
/** `apikeyuse-<key id>-<hour>`: a key was used in that hour (its `last_used_at`, to the hour). */
export const ApiKeyUsage = defineAggregate({
  name: 'ApiKeyUsage',
  category: 'apikeyuse',
  decider: apiKeyUsageDecider,
  eventTypes: API_KEY_USAGE_EVENT_TYPES,
  key: ({ key_id, hour }: { key_id: string; hour: string }) => `${key_id}-${hour}`,
});
/** `user-<id>`: a person (an e-mail address, verified or not); the id follows from the address. */
export const User = defineAggregate({ name: 'User', category: 'user', decider: userDecider, eventTypes: USER_EVENT_TYPES });
/** `sshkey-<SHA-256 hex>`: an SSH public key and the one account it is bound to. */
export const SshKey = defineAggregate({ name: 'SshKey', category: 'sshkey', decider: sshKeyDecider, eventTypes: SSH_KEY_EVENT_TYPES });
/** `signin-<user id>`: the shell-auth sign-ins of an address: links sent, followed, used for a key. */
export const SignIn = defineAggregate({ name: 'SignIn', category: 'signin', decider: signInDecider, eventTypes: SIGN_IN_EVENT_TYPES });
/** `system-bootstrap`: the first start, which creates the first org and its admin key. */
export const SystemBootstrap = defineAggregate({
  name: 'SystemBootstrap',
  category: 'system',
  decider: systemBootstrapDecider,
  eventTypes: SYSTEM_BOOTSTRAP_EVENT_TYPES,
  key: (_: 'bootstrap') => 'bootstrap',
});
/** `idempotency-<org>-<key hash>`: the first response to a write sent with an X-Idempotency-Key. */
export const IdempotentResponse = defineAggregate({
  name: 'IdempotentResponse',
  category: 'idempotency',
  decider: idempotentResponseDecider,
  eventTypes: IDEMPOTENT_RESPONSE_EVENT_TYPES,
  key: ({ org_id, key_hash }: { org_id: string; key_hash: string }) => `${org_id}-${key_hash}`,
});
/** `webhook-<id>`: an org's webhook endpoint (its URL and the event types it receives). */
export const Webhook = defineAggregate({ name: 'Webhook', category: 'webhook', decider: webhookDecider, eventTypes: WEBHOOK_EVENT_TYPES });
/** `webhookdelivery-<webhook id>-<event id>`: one event's delivery to one webhook, attempt by attempt. */
export const WebhookDelivery = defineAggregate({
  name: 'WebhookDelivery',
  category: 'webhookdelivery',
  decider: webhookDeliveryDecider,
  eventTypes: WEBHOOK_DELIVERY_EVENT_TYPES,
  key: ({ webhook_id, event_id }: { webhook_id: string; event_id: string }) => `${webhook_id}-${event_id}`,
});

export const AGGREGATES: readonly AnyAggregate[] = [
  Vm,
  VmPlacement,
  Commit,
  CommitIdReservation,
  Tag,
  Repository,
  Fork,
  Project,
  ProjectName,
  CustomDomain,
  Image,
  ImageName,
  EnvVars,
  Exec,
  GuestFile,
  Org,
  OrgName,
  OrgUsage,
  ApiKey,
  ApiKeyUsage,
  User,
  SshKey,
  SignIn,
  SystemBootstrap,
  IdempotentResponse,
  Webhook,
  WebhookDelivery,
];

const byCategory = new Map(AGGREGATES.map((aggregate) => [aggregate.category, aggregate]));
if (byCategory.size !== AGGREGATES.length) throw new Error('two aggregates share a stream category');

/** The aggregate a stream belongs to, or null for a stream no aggregate owns. */
export function aggregateOfStream(streamId: string): AnyAggregate | null {
  return byCategory.get(streamCategory(streamId)) ?? null;
}
