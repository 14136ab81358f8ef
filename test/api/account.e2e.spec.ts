import { InMemoryDriver } from '@arbor/hypervisor';
import { httpClient } from '../support/api-client';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';
import { issueKeyForMember, issueKeyForNewOrg } from '../support/issue-key';
import { startMailCatcher, type MailCatcher } from '../support/mail-catcher';
import { pollUntil } from '../support/poll-until';
import { freePort } from '../support/processes';
import { newSshPublicKey } from '../support/ssh-keys';

/**
 * A team on an invitation-only Arbor, over HTTP with real SMTP on localhost: an owner invites, the
 * invited person signs in as the Vers CLI does and lands in the org that invited them; keys are
 * listed by role, and `last_used_at` is written once an hour per key, not per request.
 */
describe('the account endpoints (/arbor/v1) and an invitation-only sign-up', () => {
  let mail: MailCatcher;
  let arbor: TestArbor;
  const shellAuth = (path: string, body: unknown) => httpClient(arbor.url, null)('POST', path, { body });

  beforeAll(async () => {
    mail = await startMailCatcher();
    const port = await freePort();
    const env = { PORT: String(port), ARBOR_PUBLIC_URL: `http://127.0.0.1:${port}`, ARBOR_SMTP_URL: mail.url, ARBOR_SIGNUP: 'invite', ARBOR_KEY_USAGE_FLUSH_MS: '100' };
    arbor = await startTestArbor({ driver: new InMemoryDriver(), env });
  }, 60_000);
  afterAll(async () => {
    await arbor?.destroy();
    await mail?.close();
  });

  it('a stranger cannot sign up; an invited address signs in and lands in the org that invited it', async () => {
    const stranger = await shellAuth('/api/shell-auth', { email: 'stranger@example.com', ssh_public_key: newSshPublicKey() });
    expect(stranger).toMatchObject({ status: 403, json: { error: 'sign-up on this Arbor is by invitation: ask an owner or admin of an org to invite stranger@example.com', success: false } });

    const invited = await arbor.request('POST', '/arbor/v1/org/members', { body: { email: 'Bob@Example.com', role: 'member' } });
    expect(invited).toMatchObject({ status: 201, json: { email: 'bob@example.com', email_verified: false, role: 'member' } });
    const invitation = await mail.next('bob@example.com');
    expect(invitation.subject).toBe('You are a member of default on Arbor');
    expect(invitation.text).toContain(`VERS_URL=${arbor.url.replace('localhost', '127.0.0.1')} vers login --git`);
    expect((await arbor.request('POST', '/arbor/v1/org/members', { body: { email: 'bob@example.com' } })).status).toBe(409);

    const bob = { email: 'bob@example.com', ssh_public_key: newSshPublicKey() };
    expect(await shellAuth('/api/shell-auth', bob)).toMatchObject({ status: 200, json: { is_new_user: false } });
    const link = /(http:\/\/\S+\/arbor\/v1\/shell-auth\/verify\?token=\S+)/.exec((await mail.next(bob.email)).text!)![1];
    const confirmed = await fetch(link, { method: 'POST' });
    expect(confirmed.status).toBe(200);
    expect(await confirmed.text()).not.toContain('were created');
    expect((await shellAuth('/api/shell-auth/verify-key', bob)).json.orgs).toEqual([expect.objectContaining({ name: 'default', role: 'member' })]);
    const { api_key } = (await shellAuth('/api/shell-auth/api-keys', { ...bob, label: 'bob-laptop' })).json;
    expect((await arbor.request('GET', '/arbor/v1/whoami', { key: api_key })).json).toMatchObject({ email: 'bob@example.com', org_name: 'default', role: 'member', is_operator: false });
    const members = (await arbor.request('GET', '/arbor/v1/org/members', { key: api_key })).json.members;
    expect(members).toContainEqual(expect.objectContaining({ email: 'bob@example.com', email_verified: true, role: 'member' }));
  }, 60_000);

  /** The org's event feed as one of its members (not an operator, who sees every org) reads it, by type. */
  const orgFeed = async (key: string, type: string) =>
    ((await arbor.request('GET', `/api/v1/events?type=${type}&limit=1000`, { key })).json.events as { type: string; data: Record<string, unknown>; metadata: { org_id: string } }[]);

  it("the first-start admin key owns the first org through the identity events, which are in that org's feed", async () => {
    const whoami = (await arbor.request('GET', '/arbor/v1/whoami')).json;
    const admin_key_id = arbor.adminKey.slice(0, 36);
    expect(whoami).toEqual({ user_id: expect.any(String), email: null, org_id: expect.any(String), org_name: 'default', role: 'owner', api_key_id: admin_key_id, is_operator: true });
    const { org_id, user_id } = whoami;
    const watcher = await issueKeyForMember(arbor.infra.eventStore, org_id, 'member');
    const stranger = await issueKeyForNewOrg(arbor.infra.eventStore);

    expect(await orgFeed(watcher.key, 'UserRegistered')).toContainEqual(expect.objectContaining({ data: expect.objectContaining({ user_id, email: null }), metadata: expect.objectContaining({ org_id }) }));
    expect(await orgFeed(watcher.key, 'OrgCreated')).toContainEqual(expect.objectContaining({ data: expect.objectContaining({ org_id, name: 'default' }) }));
    expect(await orgFeed(watcher.key, 'MemberAdded')).toContainEqual(expect.objectContaining({ data: expect.objectContaining({ org_id, user_id, role: 'owner' }) }));
    expect(await orgFeed(watcher.key, 'ApiKeyIssued')).toContainEqual(
      expect.objectContaining({ data: expect.objectContaining({ key_id: admin_key_id, org_id, user_id, is_operator: true, secret_sha256: '[redacted]' }) }),
    );
    // The members list says the same: the admin is the org's owner.
    expect((await arbor.request('GET', '/arbor/v1/org/members', { key: watcher.key })).json.members).toContainEqual(expect.objectContaining({ user_id, role: 'owner' }));
    // Another org's feed holds none of it.
    for (const type of ['UserRegistered', 'OrgCreated', 'MemberAdded', 'ApiKeyIssued']) {
      expect((await orgFeed(stranger.key, type)).filter((event) => event.metadata.org_id === org_id)).toEqual([]);
    }
  });

  it("a revoked key and a removed member are in the org's feed: ApiKeyRevoked, MemberRemoved (and the member's keys revoked)", async () => {
    const { org_id } = (await arbor.request('GET', '/arbor/v1/whoami')).json;
    const watcher = await issueKeyForMember(arbor.infra.eventStore, org_id, 'member');
    const leaked = await issueKeyForMember(arbor.infra.eventStore, org_id, 'member');
    const leaving = await issueKeyForMember(arbor.infra.eventStore, org_id, 'admin');
    await pollUntil(async () => (await arbor.request('GET', '/arbor/v1/whoami', { key: leaving.key })).status === 200);

    expect((await arbor.request('DELETE', `/arbor/v1/keys/${leaked.key_id}`)).status).toBe(204);
    expect((await arbor.request('DELETE', `/arbor/v1/org/members/${leaving.user_id}`)).status).toBe(204);

    const revoked = (await orgFeed(watcher.key, 'ApiKeyRevoked')).map((event) => event.data.key_id);
    expect(revoked).toEqual(expect.arrayContaining([leaked.key_id, leaving.key_id]));
    expect(await orgFeed(watcher.key, 'MemberRemoved')).toContainEqual(
      expect.objectContaining({ data: expect.objectContaining({ org_id, user_id: leaving.user_id, role: 'admin' }), metadata: expect.objectContaining({ org_id }) }),
    );
    // Refused within a second (the rule every api process keeps).
    for (const key of [leaked.key, leaving.key]) await pollUntil(async () => (await arbor.request('POST', '/api/v1/keys/validate', { key })).status === 401, { timeoutMs: 1000 });
  });

  it('a member lists their own keys, an owner every key of the org; another org sees none of them', async () => {
    const owner = await issueKeyForNewOrg(arbor.infra.eventStore);
    const member = await issueKeyForMember(arbor.infra.eventStore, owner.org_id, 'member');
    const other = await issueKeyForNewOrg(arbor.infra.eventStore);
    const listed = async (key: string) => ((await arbor.request('GET', '/arbor/v1/keys', { key })).json.api_keys as { api_key_id: string }[]).map((k) => k.api_key_id).sort();
    await pollUntil(async () => (await listed(owner.key)).length === 2);
    expect(await listed(owner.key)).toEqual([owner.key_id, member.key_id].sort());
    expect(await listed(member.key)).toEqual([member.key_id]);
    expect(await listed(other.key)).toEqual([other.key_id]);
    // Another org's key answers like a missing one.
    expect((await arbor.request('DELETE', `/arbor/v1/keys/${member.key_id}`, { key: other.key })).status).toBe(404);
  });

  it('last_used_at: the first use of the hour, written once an hour per key however many requests', async () => {
    const owner = await issueKeyForNewOrg(arbor.infra.eventStore);
    const before = Date.now();
    for (let i = 0; i < 20; i++) expect((await arbor.request('POST', '/api/v1/keys/validate', { key: owner.key })).status).toBe(200);
    const ownKey = async () => ((await arbor.request('GET', '/arbor/v1/keys', { key: owner.key })).json.api_keys as { api_key_id: string; last_used_at: string | null }[]).find((k) => k.api_key_id === owner.key_id)!;
    await pollUntil(async () => (await ownKey()).last_used_at !== null);
    expect(Date.parse((await ownKey()).last_used_at!)).toBeGreaterThanOrEqual(before - 1);
    await new Promise((r) => setTimeout(r, 300)); // a few more flushes
    const used = (await arbor.infra.eventStore.readAll({ max_count: 100_000 })).filter((event) => event.type === 'ApiKeyUsed' && (event.data as { key_id: string }).key_id === owner.key_id);
    expect(used).toHaveLength(1);
  });
});
