import { AggregateRepository, newCommandContext } from '@arbor/application';
import { parseSshPublicKey, SshKey, userIdOf } from '@arbor/domain';
import { InMemoryDriver } from '@arbor/hypervisor';
import { runOperatorCommand } from '../../apps/api/src/operator/operator-command';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';
import { pollUntil } from '../support/poll-until';
import { newSshPublicKey } from '../support/ssh-keys';

/**
 * The operator command (`npm run arbor -- keys|orgs|users …`) against a running Arbor's own
 * stores: what it changes, the api obeys (a key it makes works, one it revokes is refused), and
 * what it lists is what the api shows. In-memory hypervisor.
 */
describe('the operator command: keys, orgs and users', () => {
  let arbor: TestArbor;

  beforeAll(async () => {
    arbor = await startTestArbor({ driver: new InMemoryDriver() });
  }, 60_000);
  afterAll(() => arbor?.destroy());

  async function arborCli(...argv: string[]): Promise<string[]> {
    const lines: string[] = [];
    await runOperatorCommand(argv, arbor.infra, (line) => lines.push(...line.split('\n')));
    return lines;
  }
  const validate = async (key: string) => (await arbor.request('POST', '/api/v1/keys/validate', { key })).status;

  it('makes an org with its owner, a member, and a key that works; lists them', async () => {
    expect((await arborCli('orgs', 'create', 'acme', '--owner', 'ada@example.com'))[0]).toMatch(/^org acme \([0-9a-f-]{36}\) created, ada@example.com its owner/);
    expect(await arborCli('orgs', 'add-member', 'acme', 'bob@example.com', '--role', 'admin')).toEqual(['bob@example.com joins acme as admin: they sign in with `vers login --git`']);
    const made = await arborCli('keys', 'create', '--org', 'acme', '--email', 'bob@example.com', '--label', 'ci-deploy');
    const key = made[1];
    expect(key).toMatch(/^[0-9a-f-]{36}[0-9a-f]{64}$/);
    expect(await validate(key)).toBe(200);
    expect((await arbor.request('GET', '/arbor/v1/whoami', { key })).json).toMatchObject({ email: 'bob@example.com', org_name: 'acme', role: 'admin' });

    await pollUntil(async () => (await arborCli('keys', 'list', '--org', 'acme')).length === 2);
    const [header, row] = await arborCli('keys', 'list', '--org', 'acme');
    expect(header.split(/\s+/)).toEqual(['API_KEY_ID', 'ORG', 'USER', 'LABEL', 'CREATED', 'LAST_USED', 'REVOKED']);
    expect(row.split(/\s+/).slice(0, 4)).toEqual([key.slice(0, 36), 'acme', 'bob@example.com', 'ci-deploy']);
    expect((await arborCli('orgs', 'list')).map((line) => line.split(/\s+/)[1])).toEqual(['NAME', 'default', 'acme']);
    await pollUntil(async () => (await arborCli('orgs', 'members', 'acme')).length === 3);
    expect((await arborCli('orgs', 'members', 'acme')).slice(1).map((line) => line.split(/\s+/).slice(1, 3))).toEqual([
      ['ada@example.com', 'owner'],
      ['bob@example.com', 'admin'],
    ]);
    expect((await arborCli('users', 'list')).map((line) => line.split(/\s+/)[1])).toEqual(expect.arrayContaining(['EMAIL', '(admin)', 'ada@example.com', 'bob@example.com']));
  });

  it('revokes a key: the api refuses it within a second', async () => {
    const key = (await arborCli('keys', 'create', '--org', 'acme', '--email', 'ada@example.com', '--label', 'laptop'))[1];
    expect(await validate(key)).toBe(200);
    expect(await arborCli('keys', 'revoke', key.slice(0, 36))).toEqual([`API key ${key.slice(0, 36)} is revoked`]);
    const revokedAt = Date.now();
    await pollUntil(async () => (await validate(key)) === 401, { timeoutMs: 5_000 });
    expect(Date.now() - revokedAt).toBeLessThan(1_000);
    expect(await arborCli('keys', 'revoke', key.slice(0, 36))).toEqual([`API key ${key.slice(0, 36)} is revoked (it was already)`]);
  });

  it('unbinds an SSH key from its address, so another may sign in with it', async () => {
    const ssh_public_key = newSshPublicKey();
    const key = parseSshPublicKey(ssh_public_key);
    const binding = { key_id: 'a7d3c1f0-0000-4000-8000-000000000001', fingerprint: key.fingerprint, public_key: key.public_key, user_id: userIdOf('ada@example.com'), email: 'ada@example.com' };
    await new AggregateRepository(arbor.infra.eventStore).handle(SshKey, key.fingerprint_hex, { type: 'BindSshKey', ...binding, now: new Date().toISOString() }, newCommandContext({ org_id: '', actor_key_id: null }));
    const bound = () => arbor.request('POST', '/api/shell-auth/verify-public-key', { key: null, body: { ssh_public_key } });
    await pollUntil(async () => (await bound()).status === 200);
    expect(await arborCli('users', 'unbind-key', key.fingerprint)).toEqual([`SSH key ${key.fingerprint} is no longer bound to ada@example.com`]);
    await pollUntil(async () => (await bound()).status === 404);
    await expect(arborCli('users', 'unbind-key', key.fingerprint)).rejects.toThrow(`SSH key ${key.fingerprint} not found`);
  });

  it('refuses what is wrong, saying why', async () => {
    await expect(arborCli('keys', 'create', '--org', 'acme', '--email', 'eve@example.com', '--label', 'laptop')).rejects.toThrow('eve@example.com is not a member of acme: add them first (orgs add-member)');
    await expect(arborCli('keys', 'create', '--org', 'nowhere', '--email', 'ada@example.com', '--label', 'laptop')).rejects.toThrow('org nowhere not found');
    await expect(arborCli('keys', 'create', '--org', 'acme', '--email', 'ada@example.com', '--label', 'abc')).rejects.toThrow('label must be 5 to 100 characters (got 3)');
    await expect(arborCli('orgs', 'create', 'acme', '--owner', 'eve@example.com')).rejects.toThrow(/acme.*taken/);
    await expect(arborCli('users', 'unbind-key', 'nonsense')).rejects.toThrow("'nonsense' is not an SSH key fingerprint");
    await expect(arborCli('keys', 'burn')).rejects.toThrow("unknown command 'keys burn'");
    expect((await arborCli('--help'))[0]).toBe('usage: npm run arbor -- <command>');
  });
});
