import { generateApiKey } from '@arbor/domain';
import type { TestArbor } from '../../test/support/arbor-harness';
import type { Operation } from '../support/openapi-operations';
import type { OrgResources } from '../support/org-resources';

/**
 * The kinds of key the rights table speaks of, each made once for the run. Today a key has every
 * right in its org or none at all; roles (issue 12) add their kinds here (e.g. `viewer`: a key
 * issued with that role) and their rows below.
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
} satisfies Record<string, (context: KeyContext) => Promise<string | null>>;

export interface KeyContext {
  arbor: TestArbor;
  home: OrgResources;
}

export type KeyKind = keyof typeof KEY_KINDS;

export interface RightsRow {
  key: KeyKind;
  operations: (operation: Operation) => boolean;
  /** What the contract answers, said in words for a failure. */
  says: string;
  expect: (answer: { status: number | null; body: unknown }) => boolean;
}

const UNAUTHORIZED = { error: 'Unauthorized', success: false };
const isUnauthorized = ({ status, body }: { status: number | null; body: unknown }) => status === 401 && JSON.stringify(body) === JSON.stringify(UNAUTHORIZED);
const secured = (operation: Operation) => operation.secured;
const open = (operation: Operation) => !operation.secured;

/**
 * Who gets what: every row is one kind of key over the operations it names. A key that is no key
 * gets the contract's 401 envelope on every operation that asks for one, and the public operations
 * (public repositories, version, health, the catalogue) serve anyone. Roles add rows such as
 * `{ key: 'viewer', operations: writes, says: "403 {error:'Forbidden'}", expect: isForbidden }`.
 */
export const RIGHTS: RightsRow[] = [
  ...(['no key', 'a malformed key', 'an unknown key', "a real key's id with a wrong secret"] as const).map(
    (key): RightsRow => ({ key, operations: secured, says: '401 {"error":"Unauthorized","success":false}', expect: isUnauthorized }),
  ),
  { key: 'no key', operations: open, says: 'served without a key (no 401, no 403)', expect: ({ status }) => status !== null && status !== 401 && status !== 403 && status < 500 },
];
