import { Logger } from '@nestjs/common';
import { InMemoryDriver } from '@arbor/hypervisor';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';
import { httpClient, type ApiAnswer } from '../support/api-client';
import { startMailCatcher, type MailCatcher } from '../support/mail-catcher';
import { freePort } from '../support/processes';
import { newSshPublicKey } from '../support/ssh-keys';

/**
 * Sign-up and sign-in as the Vers CLI does them (`vers signup`, `vers login --git`): the link is
 * mailed over real SMTP to a server the test runs on localhost, read from the delivered message,
 * followed over HTTP (the page, then its confirm button), verify-key polled every 2–3 s, a key
 * made and used. In-memory hypervisor: nothing here needs a machine.
 */
describe('shell-auth: sign-up and sign-in by e-mail, as the Vers CLI does it', () => {
  let mail: MailCatcher;
  let arbor: TestArbor;
  let shellAuth: (path: string, body: unknown) => Promise<ApiAnswer>;
  const ada = { email: 'ada@example.com', ssh_public_key: newSshPublicKey('ada@laptop') };

  /** Arbor on a port known before it starts, so the links in its mail point at it. */
  async function startArbor(env: Record<string, string> = {}): Promise<TestArbor> {
    const port = await freePort();
    return startTestArbor({ driver: new InMemoryDriver(), env: { PORT: String(port), ARBOR_PUBLIC_URL: `http://127.0.0.1:${port}`, ARBOR_SMTP_URL: mail.url, ARBOR_MAIL_FROM: 'Arbor <arbor@example.test>', ...env } });
  }

  const linkIn = (text: string) => /(http:\/\/\S+\/arbor\/v1\/shell-auth\/verify\?token=\S+)/.exec(text)![1];
  const post = (url: string) => fetch(url, { method: 'POST' }).then(async (r) => ({ status: r.status, html: await r.text() }));
  const get = (url: string) => fetch(url).then(async (r) => ({ status: r.status, html: await r.text(), headers: r.headers }));

  /** verify-key until it answers 200, every 2.5 s as the CLI does (it polls every 3 s); every answer kept. */
  async function pollVerifyKey(body: unknown, timeoutMs = 30_000): Promise<ApiAnswer[]> {
    const answers: ApiAnswer[] = [];
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const answer = await shellAuth('/api/shell-auth/verify-key', body);
      answers.push(answer);
      if (answer.status !== 401 || Date.now() > deadline) return answers;
      await new Promise((r) => setTimeout(r, 2_500));
    }
  }

  /** A whole sign-in: start, the mailed link followed and confirmed; answers the link. */
  async function signIn(subject: { email: string; ssh_public_key: string }, on: TestArbor = arbor): Promise<string> {
    const started = await httpClient(on.url, null)('POST', '/api/shell-auth', { body: subject });
    expect(started.status).toBe(200);
    const link = linkIn((await mail.next(subject.email)).text!);
    expect((await post(link)).status).toBe(200);
    return link;
  }

  beforeAll(async () => {
    mail = await startMailCatcher();
    arbor = await startArbor();
    shellAuth = (path, body) => httpClient(arbor.url, null)('POST', path, { body });
  }, 60_000);
  afterAll(async () => {
    await arbor?.destroy();
    await mail?.close();
  });

  it('signs a new user up: mail, link, poll, key, and the key works', async () => {
    const started = await shellAuth('/api/shell-auth', { ...ada, body: 'vers login --git from laptop' });
    expect(started.status).toBe(200);
    expect(started.json).toEqual({
      success: true,
      user_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      email: 'ada@example.com',
      is_new_user: true,
      nonce: expect.stringMatching(/^[0-9a-f-]{36}$/),
      ssh_public_key: ada.ssh_public_key.split(' ').slice(0, 2).join(' '),
      already_verified: false,
    });

    const message = await mail.next(ada.email);
    expect(message.from?.value).toEqual([{ name: 'Arbor', address: 'arbor@example.test' }]);
    expect(message.subject).toBe('Confirm your sign-in to Arbor');
    expect(message.text).toContain('vers login --git from laptop');
    expect(message.text).toMatch(/SSH key: {2}SHA256:/);
    const link = linkIn(message.text!);

    // Not yet: the contract's 401 body, saying why.
    expect(await shellAuth('/api/shell-auth/verify-key', ada)).toMatchObject({ status: 401, json: { verified: false, is_active: false, reason: 'waiting for the link in the e-mail to be followed' } });

    // The CLI polls while the person reads their mail; the page shows what is being confirmed.
    const polling = pollVerifyKey(ada);
    const page = await get(link);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.html).toContain('ada@example.com');
    expect(page.html).toContain('vers login --git from laptop');
    expect(page.html).toMatch(/<form method="post" action="verify\?token=[^"]+"><button type="submit">Confirm sign-in<\/button><\/form>/);
    const confirmed = await post(link);
    expect(confirmed.status).toBe(200);
    expect(confirmed.html).toContain('You are signed in as ada@example.com');
    expect(confirmed.html).toContain('its org &quot;ada&quot; were created; you are its owner');

    const answers = await polling;
    expect(answers.at(-1)).toMatchObject({ status: 200, json: { verified: true, is_active: true, user_id: started.json.user_id, key_id: expect.any(String), orgs: [{ org_id: expect.any(String), name: 'ada', role: 'owner' }] } });

    const made = await shellAuth('/api/shell-auth/api-keys', { ...ada, label: 'vers-cli-laptop' });
    expect(made).toMatchObject({ status: 200, json: { success: true, api_key: expect.stringMatching(/^[0-9a-f-]{36}[0-9a-f]{64}$/), api_key_id: expect.any(String), org_id: expect.any(String), org_name: 'ada' } });
    const key = made.json.api_key as string;
    expect(key.startsWith(made.json.api_key_id)).toBe(true);

    // The key lists (and makes) VMs in the new org, and says who it is.
    const asAda = httpClient(arbor.url, key);
    expect((await asAda('GET', '/api/v1/vms')).status).toBe(200);
    expect((await asAda('POST', '/api/v1/vm/new_root?wait_boot=true', { body: { vm_config: {} } })).status).toBe(201);
    expect((await asAda('GET', '/api/v1/vms')).json).toHaveLength(1);
    expect((await arbor.request('GET', '/api/v1/vms')).json).toHaveLength(0); // the admin's org is another
    expect((await asAda('GET', '/arbor/v1/whoami')).json).toMatchObject({ email: 'ada@example.com', org_name: 'ada', role: 'owner', api_key_id: made.json.api_key_id });

    // The sign-up is in the new org's feed, as events on their own streams.
    const feed = (await asAda('GET', '/api/v1/events?limit=500')).json.events.map((e: { type: string }) => e.type);
    for (const type of ['SignInLinkFollowed', 'UserRegistered', 'EmailVerified', 'SshKeyBound', 'OrgCreated', 'MemberAdded', 'ApiKeyIssued']) expect(feed).toContain(type);
  }, 90_000);

  it('a link works once; a confirmed sign-in makes one key', async () => {
    const link = await signIn(ada);
    expect(await pollVerifyKey(ada)).toMatchObject([{ status: 200 }]);
    expect(await shellAuth('/api/shell-auth/api-keys', { ...ada, label: 'vers-cli-laptop' })).toMatchObject({ status: 200 });
    const again = await post(link);
    expect(again.status).toBe(409);
    expect(again.html).toContain('This sign-in link was used already');
    expect((await get(link)).status).toBe(409);
    const second = await shellAuth('/api/shell-auth/api-keys', { ...ada, label: 'vers-cli-laptop' });
    expect(second).toMatchObject({ status: 401, json: { error: 'this sign-in was used to make an API key already: start a new one', success: false } });
    expect(await shellAuth('/api/shell-auth/verify-key', ada)).toMatchObject({ status: 401, json: { verified: false, reason: expect.stringContaining('used to make an API key already') } });
    // An existing user signing in again is no new user, and gets no second org.
    const started = await shellAuth('/api/shell-auth', ada);
    expect(started.json.is_new_user).toBe(false);
    expect((await post(linkIn((await mail.next(ada.email)).text!))).status).toBe(200);
    expect((await shellAuth('/api/shell-auth/verify-key', ada)).json.orgs).toEqual([expect.objectContaining({ name: 'ada', role: 'owner' })]);
  }, 60_000);

  it('a link that is not one, or cut short, says so', async () => {
    for (const url of [`${arbor.url}/arbor/v1/shell-auth/verify?token=nonsense`, `${arbor.url}/arbor/v1/shell-auth/verify`]) {
      const page = await get(url);
      expect(page.status).toBe(404);
      expect(page.html).toContain('This sign-in link is not valid');
    }
  });

  it('an alias address needs its base account, verified: 403 otherwise', async () => {
    const alias = await shellAuth('/api/shell-auth', { email: 'bob+ci@example.com', ssh_public_key: newSshPublicKey() });
    expect(alias).toMatchObject({ status: 403, json: { error: expect.stringContaining('bob+ci@example.com is an alias of bob@example.com'), success: false } });
    // ada@example.com is verified (above): her alias is an account of its own.
    const adaCi = { email: 'ada+ci@example.com', ssh_public_key: newSshPublicKey() };
    expect(await shellAuth('/api/shell-auth', adaCi)).toMatchObject({ status: 200, json: { is_new_user: true } });
  });

  it('an SSH key bound to one address is refused for another: 409', async () => {
    const eve = await shellAuth('/api/shell-auth', { email: 'eve@example.com', ssh_public_key: ada.ssh_public_key });
    expect(eve).toMatchObject({ status: 409, json: { error: 'this SSH key is bound to another e-mail address', success: false } });
    const bound = await shellAuth('/api/shell-auth/verify-public-key', { ssh_public_key: ada.ssh_public_key });
    expect(bound).toMatchObject({ status: 200, json: { verified: true, count: 1, matches: [{ email: 'ada@example.com', public_key_verified: true, is_active: true }] } });
    expect(await shellAuth('/api/shell-auth/verify-public-key', { ssh_public_key: newSshPublicKey() })).toMatchObject({ status: 404, json: { verified: false, reason: 'no account has this SSH key' } });
  });

  it('bad input is a 400 that says what is wrong; a label under 5 characters too', async () => {
    const key = newSshPublicKey();
    expect(await shellAuth('/api/shell-auth', { email: 'not-an-address', ssh_public_key: key })).toMatchObject({ status: 400, json: { error: "email 'not-an-address' is not a valid e-mail address" } });
    expect(await shellAuth('/api/shell-auth', { email: 'ok@example.com', ssh_public_key: 'ssh-rsa nope' })).toMatchObject({ status: 400, json: { error: expect.stringContaining('is not an OpenSSH public key') } });
    expect(await shellAuth('/api/shell-auth', { email: 'ok@example.com' })).toMatchObject({ status: 400, json: { error: 'ssh_public_key is required' } });
    expect(await shellAuth('/api/shell-auth/api-keys', { ...ada, label: 'abc' })).toMatchObject({ status: 400, json: { error: 'label must be 5 to 100 characters (got 3)', success: false } });
  });

  it('an org the account does not belong to is a 404; the key goes to the org named', async () => {
    await signIn(ada);
    expect(await shellAuth('/api/shell-auth/api-keys', { ...ada, label: 'vers-cli-laptop', org_name: 'default' })).toMatchObject({ status: 404, json: { error: 'org not found' } });
    expect(await shellAuth('/api/shell-auth/api-keys', { ...ada, label: 'vers-cli-laptop', org_name: 'ada' })).toMatchObject({ status: 200, json: { org_name: 'ada' } });
  }, 30_000);

  describe('on an Arbor whose links last a second', () => {
    let quick: TestArbor;
    beforeAll(async () => {
      quick = await startArbor({ ARBOR_SIGNIN_LINK_TTL_MS: '1000' });
    }, 60_000);
    afterAll(() => quick?.destroy());

    it('an expired link says so (410), and changes nothing', async () => {
      const grace = { email: 'grace@example.com', ssh_public_key: newSshPublicKey() };
      expect((await httpClient(quick.url, null)('POST', '/api/shell-auth', { body: grace })).status).toBe(200);
      const link = linkIn((await mail.next(grace.email)).text!);
      await new Promise((r) => setTimeout(r, 1_500));
      expect((await get(link)).status).toBe(410);
      const confirmed = await post(link);
      expect(confirmed.status).toBe(410);
      expect(confirmed.html).toContain('this sign-in link expired');
      expect(await httpClient(quick.url, null)('POST', '/api/shell-auth/verify-key', { body: grace })).toMatchObject({ status: 401, json: { reason: 'the sign-in link expired before it was followed: start a new sign-in' } });
    });
  });

  describe('rate limits (behind a proxy the api trusts, so each client has an address of its own)', () => {
    let limited: TestArbor;
    let from: (address: string, body: unknown) => Promise<ApiAnswer>;
    beforeAll(async () => {
      limited = await startArbor({ ARBOR_TRUST_PROXY: 'loopback' });
      from = (address, body) => httpClient(limited.url, null)('POST', '/api/shell-auth', { body, headers: { 'x-forwarded-for': address } });
    }, 60_000);
    afterAll(() => limited?.destroy());

    it('five sign-in mails to one address in fifteen minutes, then 429 with Retry-After', async () => {
      const subject = { email: 'hopper@example.com', ssh_public_key: newSshPublicKey() };
      for (let i = 0; i < 5; i++) expect((await from(`198.51.100.${i + 1}`, subject)).status).toBe(200);
      const refused = await from('198.51.100.9', subject);
      expect(refused).toMatchObject({ status: 429, json: { error: expect.stringMatching(/^too many sign-in e-mails to this address: try again in \d+ s$/), success: false } });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(800);
      expect(mail.messages.filter((m) => m.to && JSON.stringify(m.to).includes('hopper@example.com'))).toHaveLength(5);
    });

    it('twenty sign-ins from one client address in fifteen minutes, then 429 with Retry-After', async () => {
      for (let i = 0; i < 20; i++) expect((await from('203.0.113.7', { email: `user${i}@example.org`, ssh_public_key: newSshPublicKey() })).status).toBe(200);
      const refused = await from('203.0.113.7', { email: 'user20@example.org', ssh_public_key: newSshPublicKey() });
      expect(refused).toMatchObject({ status: 429, json: { error: expect.stringMatching(/^too many sign-ins from this address: try again in \d+ s$/) } });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(800);
      expect((await from('203.0.113.8', { email: 'user20@example.org', ssh_public_key: newSshPublicKey() })).status).toBe(200); // another client is not held back
    }, 60_000);
  });

  describe('with no SMTP server configured', () => {
    it('writes the link to the log, saying why, and the link works', async () => {
      const warn = jest.spyOn(Logger.prototype, 'warn');
      const logged = await startArbor({ ARBOR_SMTP_URL: '' });
      try {
        const turing = { email: 'turing@example.com', ssh_public_key: newSshPublicKey() };
        expect((await httpClient(logged.url, null)('POST', '/api/shell-auth', { body: turing })).status).toBe(200);
        const lines = warn.mock.calls.map((call) => String(call[0]));
        expect(lines).toContain('no SMTP server configured (ARBOR_SMTP_URL is unset): sign-in links and invitations are written to this log instead of mailed');
        const entry = lines.find((line) => line.includes('this mail to turing@example.com is written here instead of sent'))!;
        expect(entry).toContain('no SMTP server configured (ARBOR_SMTP_URL)');
        expect((await post(linkIn(entry))).status).toBe(200);
      } finally {
        warn.mockRestore();
        await logged.destroy();
      }
    }, 60_000);
  });
});
