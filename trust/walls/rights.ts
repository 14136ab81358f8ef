import { generateApiKey } from '@arbor/domain';
import type { TestArbor } from '../../test/support/arbor-harness';
import { issueKeyForMember } from '../../test/support/issue-key';
import type { Operation } from '../support/openapi-operations';
import type { OrgResources } from '../support/org-resources';

/**
 * The kinds of key the rights table speaks of, each made once for the run: keys that are no key
 * (401 on every secured operation), and keys of org A's members whose role does not reach what
 * they call (403). Org A's resources were all made with its owner's key.
 */
export const KEY_KINDS = {
  /** No Authorization header at all. */
  'no key': async () => null,
  /** Not `<uuid><64 hex>`. */
  'a malformed key': async () => 'not-a-key',
  /** Well-formed, never issued. */
  'an unknown key': async () => generateApiKey().key,
  /** A real key's id with another secret. */
  "a real key's id with a wrong secret": async ({ home }: KeyContext) => `${home.key.slice(0, 36)}${'0'.repeat(64)}`,
  /** A `member` of org A: creates their own things, changes only what they created. */
  'a member of the org': async ({ arbor, homeOrgId }: KeyContext) => (await issueKeyForMember(arbor.infra.eventStore, homeOrgId, 'member')).key,
  /** An `admin` of org A: changes anything in the org, but only an owner makes, unmakes or removes an owner. */
  'an admin of the org': async ({ arbor, homeOrgId }: KeyContext) => (await issueKeyForMember(arbor.infra.eventStore, homeOrgId, 'admin')).key,
} satisfies Record<string, (context: KeyContext) => Promise<string | null>>;

export interface KeyContext {
  arbor: TestArbor;
  home: OrgResources;
  homeOrgId: string;
}

export type KeyKind = keyof typeof KEY_KINDS;

export interface RightsRow {
  key: KeyKind;
  operations: (operation: Operation) => boolean;
  /**
   * Whose resources fill the path: `missing` (names nobody's: what a key that is no key meets
   * first does not depend on it) or `home` (org A's own, made by its owner: what the role rule
   * decides on). `body`: fields set in the operation's valid body.
   */
  on?: 'missing' | 'home';
  body?: Record<string, unknown>;
  /** What the contract answers, said in words for a failure. */
  says: string;
  expect: (answer: { status: number | null; body: unknown }) => boolean;
}

type Answer = { status: number | null; body: unknown };

const UNAUTHORIZED = { error: 'Unauthorized', success: false };
const isUnauthorized = ({ status, body }: Answer) => status === 401 && JSON.stringify(body) === JSON.stringify(UNAUTHORIZED);
/** The contract's 403, with the role rule's reason (`libs/domain/src/org/org-roles.ts`). */
const isForbidden =
  (reason: RegExp) =>
  ({ status, body }: Answer) =>
    status === 403 && typeof body === 'object' && body !== null && (body as { success?: unknown }).success === false && reason.test(String((body as { error?: unknown }).error));
const secured = (operation: Operation) => operation.secured;
const open = (operation: Operation) => !operation.secured;
const named = (ids: string[]) => {
  const set = new Set(ids);
  return (operation: Operation) => set.has(operation.id);
};

/**
 * The writes that change (or, like a VM's SSH key, give the power to change) one resource of the
 * org: the route's `@Changes` kind names it. A member may make them only on what they created; on
 * what another member (here: the owner) made they answer 403, and an owner or admin may.
 */
export const CHANGES_OF_ONE_RESOURCE = [
  'PATCH /api/v1/vm/{vm_id}/state',
  'PATCH /api/v1/vm/{vm_id}/disk',
  'PATCH /api/v1/vm/{vm_id}/label',
  'DELETE /api/v1/vm/{vm_id}',
  'POST /api/v1/vm/{vm_id}/commit',
  'POST /api/v1/vm/{vm_id}/exec',
  'POST /api/v1/vm/{vm_id}/exec/stream',
  'PUT /api/v1/vm/{vm_id}/files',
  'GET /api/v1/vm/{vm_id}/ssh_key',
  'POST /api/v1/vm/branch/by_vm/{vm_id}',
  'POST /api/v1/vm/{vm_or_commit_id}/branch',
  'PATCH /api/v1/commits/{commit_id}',
  'DELETE /api/v1/commits/{commit_id}',
  'PATCH /api/v1/commit_tags/{tag_name}',
  'DELETE /api/v1/commit_tags/{tag_name}',
  'PATCH /api/v1/repositories/{repo_name}/visibility',
  'DELETE /api/v1/repositories/{repo_name}',
  'PATCH /api/v1/repositories/{repo_name}/tags/{tag_name}',
  'DELETE /api/v1/repositories/{repo_name}/tags/{tag_name}',
  'DELETE /api/v1/domains/{domain_id}',
  'DELETE /arbor/v1/webhooks/{webhook_id}',
  'DELETE /arbor/v1/keys/{key_id}',
  'DELETE /api/v1/images/images/{base_image_id}',
  'PATCH /arbor/v1/images/{base_image_id}',
];

/** The member endpoints: owners and admins manage members (anyone may leave, which no row here asks). */
export const MEMBERSHIP_CHANGES = ['POST /arbor/v1/org/members', 'PATCH /arbor/v1/org/members/{user_id}', 'DELETE /arbor/v1/org/members/{user_id}'];

/**
 * The writes any member may make (each route's `@AnyMember` says why): they create the caller's
 * own things, touch only the caller's own, or read. Listed so that every write of the document is
 * placed in the table: one neither here nor above fails the walls (a new route must say).
 */
export const ANY_MEMBERS_WRITES = [
  'POST /api/v1/vm/new_root',
  'POST /api/v1/vm/from_commit',
  'POST /api/v1/vm/branch/by_commit/{commit_id}',
  'POST /api/v1/vm/branch/by_tag/{tag_name}',
  'POST /api/v1/vm/branch/by_ref/{repo_name}/{tag_name}',
  'POST /api/v1/vm/{vm_id}/exec/stream/attach',
  'POST /api/v1/commit_tags',
  'POST /api/v1/repositories',
  'POST /api/v1/repositories/{repo_name}/tags',
  'POST /api/v1/repositories/fork',
  'POST /api/v1/deploy',
  'POST /api/v1/images/create',
  'POST /api/v1/images/upload',
  'POST /api/v1/domains',
  'PUT /api/v1/env_vars',
  'DELETE /api/v1/env_vars/{key}',
  'POST /api/v1/keys/validate',
  'POST /arbor/v1/keys',
  'POST /arbor/v1/webhooks',
];

const ROLE_REFUSAL = /^Forbidden: this (vm|commit|commit tag|repository|repository tag|webhook|API key|domain|image) belongs to another member of the org/;

/**
 * Who gets what: every row is one kind of key over the operations it names. A key that is no key
 * gets the contract's 401 envelope on every operation that asks for one, and the public operations
 * (public repositories, version, health, the catalogue) serve anyone. A member's key gets the
 * contract's 403 on every change of what another member made and on managing members; an admin's
 * on making someone an owner.
 */
export const RIGHTS: RightsRow[] = [
  ...(['no key', 'a malformed key', 'an unknown key', "a real key's id with a wrong secret"] as const).map(
    (key): RightsRow => ({ key, operations: secured, says: '401 {"error":"Unauthorized","success":false}', expect: isUnauthorized }),
  ),
  { key: 'no key', operations: open, says: 'served without a key (no 401, no 403)', expect: ({ status }) => status !== null && status !== 401 && status !== 403 && status < 500 },
  {
    key: 'a member of the org',
    operations: named(CHANGES_OF_ONE_RESOURCE),
    on: 'home',
    says: '403 "Forbidden: this <kind> belongs to another member of the org; …"',
    expect: isForbidden(ROLE_REFUSAL),
  },
  {
    key: 'a member of the org',
    operations: named(MEMBERSHIP_CHANGES),
    on: 'home',
    says: '403 "Forbidden: only owners and admins manage the members of an org"',
    expect: isForbidden(/^Forbidden: only owners and admins manage the members of an org$/),
  },
  {
    key: 'an admin of the org',
    operations: named(['POST /arbor/v1/org/members', 'PATCH /arbor/v1/org/members/{user_id}']),
    on: 'home',
    body: { role: 'owner' },
    says: '403 "Forbidden: only an owner makes, unmakes or removes an owner"',
    expect: isForbidden(/^Forbidden: only an owner makes, unmakes or removes an owner$/),
  },
];
