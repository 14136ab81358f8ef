import { startTestArbor, type TestArbor, type TestResponse } from '../support/arbor-harness';
import { issueKeyForNewOrg } from '../support/issue-key';

/**
 * Env vars over HTTP: GET/PUT/DELETE /env_vars belong to the calling key, and every VM the key
 * makes afterwards (new_root, from_commit, every branch variant) finds them in its environment,
 * as they were when the VM was made; a running VM keeps what it booted with.
 */

/** The calls of one client (one key) of a running Arbor, and the VMs it made, to delete at the end. */
function clientOf(arbor: TestArbor, key: string) {
  const vms: string[] = [];
  const request = (method: string, path: string, body?: unknown): Promise<TestResponse> => arbor.request(method, `/api/v1${path}`, { key, body });
  /** A new VM's id from a 201 answer of a creation or a branch; remembered for cleanUp. */
  const made = (res: TestResponse): string => {
    if (res.status !== 201) throw new Error(`expected 201, got ${res.status}: ${res.text}`);
    const vm_id: string = res.json.vm_id ?? res.json.vms[0].vm_id;
    vms.push(vm_id);
    return vm_id;
  };
  return {
    key,
    request,
    put: (vars: Record<string, string>, replace?: boolean) => request('PUT', '/env_vars', replace === undefined ? { vars } : { vars, replace }),
    vars: async () => (await request('GET', '/env_vars')).json.vars as Record<string, string>,
    newRoot: async () => made(await request('POST', '/vm/new_root?wait_boot=true', { vm_config: { mem_size_mib: 256 } })),
    made,
    /** `printenv KEY` in the VM: the value, or null when the variable is not set. */
    async printenv(vm: string, name: string): Promise<string | null> {
      const res = await request('POST', `/vm/${vm}/exec`, { command: ['printenv', name] });
      expect(res.status).toBe(200);
      if (res.json.exit_code === 1 && res.json.stdout === '') return null;
      expect(res.json).toMatchObject({ exit_code: 0, stderr: '' });
      return (res.json.stdout as string).replace(/\n$/, '');
    },
    async cleanUp() {
      for (const vm of vms.reverse()) expect((await request('DELETE', `/vm/${vm}`)).status).toBe(200);
    },
  };
}
type Client = ReturnType<typeof clientOf>;

describe('env vars (HTTP, sandbox driver)', () => {
  let arbor: TestArbor;
  const clients: Client[] = [];
  /** A key of a new org of its own, so each test starts with no env vars. */
  const newClient = async () => {
    const client = clientOf(arbor, (await issueKeyForNewOrg(arbor.infra.eventStore)).key);
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    arbor = await startTestArbor({ env: { HYPERVISOR: 'sandbox' } });
  }, 300_000);
  afterAll(async () => {
    try {
      for (const client of clients) await client.cleanUp();
    } finally {
      await arbor?.destroy();
    }
  }, 120_000);

  describe('the three operations', () => {
    it('GET is empty at first; PUT upserts and answers the complete set; replace=true keeps exactly the given set', async () => {
      const c = await newClient();
      const empty = await c.request('GET', '/env_vars');
      expect({ status: empty.status, body: empty.json }).toEqual({ status: 200, body: { vars: {} } });
      const put = await c.put({ A: '1', B: '2' });
      expect({ status: put.status, body: put.json }).toEqual({ status: 200, body: { vars: { A: '1', B: '2' } } });
      expect((await c.put({ B: '3', C: '4' }, false)).json).toEqual({ vars: { A: '1', B: '3', C: '4' } });
      expect((await c.request('PUT', '/env_vars', { vars: { D: '5' }, replace: null })).json).toEqual({ vars: { A: '1', B: '3', C: '4', D: '5' } });
      expect(await c.vars()).toEqual({ A: '1', B: '3', C: '4', D: '5' });

      expect((await c.put({ E: '6', A: 'again' }, true)).json).toEqual({ vars: { A: 'again', E: '6' } });
      expect(await c.vars()).toEqual({ A: 'again', E: '6' });
      expect((await c.put({}, false)).json).toEqual({ vars: { A: 'again', E: '6' } });
      expect((await c.put({}, true)).json).toEqual({ vars: {} });
      expect(await c.vars()).toEqual({});
    });

    it('DELETE removes a key that is set (204); any other answers 404 "Environment variable not found"', async () => {
      const c = await newClient();
      await c.put({ A: '1', B: '2' });
      const deleted = await c.request('DELETE', '/env_vars/A');
      expect({ status: deleted.status, text: deleted.text }).toEqual({ status: 204, text: '' });
      expect(await c.vars()).toEqual({ B: '2' });
      const notFound = { status: 404, json: { error: 'Environment variable not found', success: false } };
      for (const key of ['A', 'b', 'NEVER_SET', 'toString', 'hasOwnProperty', '1BAD', 'K'.repeat(300)]) {
        expect({ key, ...(await c.request('DELETE', `/env_vars/${key}`)) }).toMatchObject({ key, ...notFound });
      }
      expect(await c.vars()).toEqual({ B: '2' });
    });

    it('a bad key or value is a 400 naming the key, and changes nothing', async () => {
      const c = await newClient();
      await c.put({ KEPT: 'yes' });
      const refused = async (vars: Record<string, string>, message: string | RegExp) => {
        const before = await arbor.infra.eventStore.headPosition();
        const res = await c.put(vars);
        expect({ status: res.status, body: res.json }).toEqual({ status: 400, body: { error: expect.stringMatching(message), success: false } });
        expect(await arbor.infra.eventStore.headPosition()).toBe(before);
      };
      await refused({ '1BAD': 'x' }, /^env var key '1BAD' must match \^\[A-Za-z_\]/);
      await refused({ 'A-B': 'x' }, /'A-B'/);
      await refused({ 'WITH SPACE': 'x' }, /'WITH SPACE'/);
      await refused({ 'ÜBER': 'x' }, /'ÜBER'/);
      await refused({ '': 'x' }, /^env var key '' must match/);
      await refused({ GOOD: 'x', ['K'.repeat(257)]: 'x' }, /^env var key 'K{32}…' is longer than 256 characters$/);
      await refused({ BIG: 'x'.repeat(8193) }, "env var 'BIG' has a value longer than 8192 characters");
      await refused({ MULTI: 'line one\nline two' }, "env var 'MULTI' has a line break or NUL in its value, which /etc/environment cannot hold");
      await refused({ CR: 'a\rb' }, /^env var 'CR' has a line break/);
      await refused({ NUL: 'a\0b' }, /^env var 'NUL' has a line break/);
      await refused(Object.fromEntries(Array.from({ length: 257 }, (_, i) => [`V${i}`, 'x'])), /^at most 256 env vars may be set \(this would make 258\)$/);
      expect(await c.vars()).toEqual({ KEPT: 'yes' });

      // The limits themselves are allowed.
      const longest = { ['K'.repeat(256)]: 'v'.repeat(8192), _under: '', x1: 'y' };
      expect((await c.put(longest, true)).json).toEqual({ vars: longest });
    });

    it('a body whose vars is not an object of strings is a 422 saying so; a body that is not JSON a 400', async () => {
      const c = await newClient();
      const shape = async (body: unknown, message: string | RegExp) => {
        const res = await c.request('PUT', '/env_vars', body);
        expect({ status: res.status, body: res.json }).toEqual({ status: 422, body: { error: expect.stringMatching(message), success: false } });
      };
      await shape({}, /missing field `vars`/);
      await shape({ vars: null }, /missing field `vars`/);
      await shape({ replace: true }, /missing field `vars`/);
      await shape({ vars: 'A=1' }, /vars must be an object of KEY: "value" strings/);
      await shape({ vars: ['A=1'] }, /vars must be an object of KEY: "value" strings/);
      await shape({ vars: { A: 1 } }, /target type: vars: the value of 'A' must be a string, not number$/);
      await shape({ vars: { A: 'ok', B: null } }, /target type: vars: the value of 'B' must be a string, not null$/);
      await shape({ vars: { A: { nested: 'x' } } }, /target type: vars: the value of 'A' must be a string, not object$/);
      await shape({ vars: { A: true } }, /the value of 'A' must be a string, not boolean/);
      await shape({ vars: { A: '1' }, replace: 'yes' }, /replace must be a boolean/);
      const notJson = await arbor.request('PUT', '/api/v1/env_vars', { key: c.key, rawBody: '{"vars": {"A": "1"' });
      expect({ status: notJson.status, success: notJson.json.success }).toEqual({ status: 400, success: false });
      expect(await c.vars()).toEqual({});
    });

    it('"__proto__", "constructor" and "prototype" are refused (400 naming the key); other names of Object.prototype are ordinary keys', async () => {
      const c = await newClient();
      await c.put({ KEPT: 'yes' });
      // Raw JSON: in a JS object literal "__proto__" would be the prototype, not a key.
      for (const key of ['__proto__', 'constructor', 'prototype']) {
        for (const value of [JSON.stringify('x'), '{"polluted":"yes"}']) {
          const res = await arbor.request('PUT', '/api/v1/env_vars', { key: c.key, rawBody: `{"vars":{"OK":"1",${JSON.stringify(key)}:${value}}}` });
          const error = `env var key '${key}' is not allowed: it is a special name of JavaScript objects`;
          expect({ key, value, status: res.status, body: res.json }).toEqual({ key, value, status: 400, body: { error, success: false } });
        }
        expect((await c.request('DELETE', `/env_vars/${key}`)).status).toBe(404);
      }
      // Arbor runs in this process: had any of it reached a prototype, it would show here.
      const plain: Record<string, unknown> = {};
      expect([Object.getPrototypeOf(plain), plain.constructor, plain.polluted, plain.OK]).toEqual([Object.prototype, Object, undefined, undefined]);
      expect(await c.vars()).toEqual({ KEPT: 'yes' });

      const harmless = { toString: 't', hasOwnProperty: 'h', valueOf: 'v', __defineGetter__: 'g', isPrototypeOf: 'i' };
      expect((await c.put(harmless)).json).toEqual({ vars: { KEPT: 'yes', ...harmless } });
      expect(await c.vars()).toEqual({ KEPT: 'yes', ...harmless });
      expect((await c.request('DELETE', '/env_vars/hasOwnProperty')).status).toBe(204);
      expect(Object.keys(await c.vars()).sort()).toEqual(['KEPT', '__defineGetter__', 'isPrototypeOf', 'toString', 'valueOf']);
    });

    it('answers 401 without a valid key', async () => {
      for (const [method, path, body] of [['GET', '/env_vars'], ['PUT', '/env_vars', { vars: { A: '1' } }], ['DELETE', '/env_vars/A']] as const) {
        for (const key of [null, `${'0'.repeat(36)}${'f'.repeat(64)}`]) {
          const res = await arbor.request(method, `/api/v1${path}`, { key, body });
          expect({ method, status: res.status, success: res.json?.success }).toEqual({ method, status: 401, success: false });
        }
      }
    });

    it("belong to the key: another org's key sees, changes and deletes only its own", async () => {
      const [ours, theirs] = [await newClient(), await newClient()];
      await ours.put({ SECRET: 'ours', SHARED_NAME: 'ours' });
      await theirs.put({ SHARED_NAME: 'theirs' });
      expect(await ours.vars()).toEqual({ SECRET: 'ours', SHARED_NAME: 'ours' });
      expect(await theirs.vars()).toEqual({ SHARED_NAME: 'theirs' });
      expect((await theirs.request('DELETE', '/env_vars/SECRET')).status).toBe(404);
      expect((await theirs.put({ OTHER: 'x' }, true)).json).toEqual({ vars: { OTHER: 'x' } });
      expect(await ours.vars()).toEqual({ SECRET: 'ours', SHARED_NAME: 'ours' });
    });

    it('each change is an event on the key\'s stream, with the request\'s correlation id, in the feed', async () => {
      const c = await newClient();
      const correlation = '6f1c2d3e-4a5b-4c6d-8e7f-0a1b2c3d4e5f';
      const put = await arbor.request('PUT', '/api/v1/env_vars', { key: c.key, body: { vars: { A: '1' } }, headers: { 'x-correlation-id': correlation } });
      expect(put.status).toBe(200);
      await c.request('DELETE', '/env_vars/A');
      const feed = (await c.request('GET', '/events?limit=1000')).json.events as { type: string; stream_id: string; data: unknown; metadata: { correlation_id: string } }[];
      const owner = c.key.slice(0, 36);
      expect(feed.filter((e) => e.stream_id === `envvars-${owner}`).map((e) => [e.type, e.data])).toEqual([
        // The value is a secret, sealed in the log: the feed shows its name only.
        ['EnvVarsSet', { owner_id: owner, vars: { A: '[redacted]' }, replace: false, set_at: expect.any(String) }],
        ['EnvVarDeleted', { owner_id: owner, key: 'A', deleted_at: expect.any(String) }],
      ]);
      expect(feed.find((e) => e.type === 'EnvVarsSet')?.metadata.correlation_id).toBe(correlation);
    });
  });

  describe('in the VMs the key makes', () => {
    it('come back through exec exactly as set: "=", quotes, spaces, unicode, shell syntax, empty', async () => {
      const c = await newClient();
      const vars: Record<string, string> = {
        EQUALS: 'a=b==c=',
        DOUBLE_QUOTED: '"x"',
        SINGLE_QUOTED: "'y'",
        INNER_QUOTES: `it's "quoted" inside`,
        HALF_QUOTED: '"open',
        SPACES: '  lead, inner  and trail  ',
        TAB: 'a\tb',
        UNICODE: 'héllo wörld ✓ 日本語 🌳',
        SHELL: '$HOME `id` $(id) \\n \\ ; | & #',
        EMPTY: '',
        toString: 'names of Object.prototype are ordinary keys',
        hasOwnProperty: 'h',
      };
      expect((await c.put(vars)).status).toBe(200);
      const vm = await c.newRoot();
      for (const [name, value] of Object.entries(vars)) expect({ name, value: await c.printenv(vm, name) }).toEqual({ name, value });

      // `env` of a shell sees them too; /etc/environment holds plain KEY=VALUE lines sorted by key.
      const env = await c.request('POST', `/vm/${vm}/exec`, { command: ['sh', '-c', 'env; echo ---; cut -d= -f1 /etc/environment'] });
      const [listed, fileKeys] = (env.json.stdout as string).split('---\n');
      expect(listed.split('\n')).toEqual(expect.arrayContaining(['EQUALS=a=b==c=', 'DOUBLE_QUOTED="x"', 'UNICODE=héllo wörld ✓ 日本語 🌳', 'toString=names of Object.prototype are ordinary keys']));
      expect(fileKeys.trim().split('\n')).toEqual(Object.keys(vars).sort());
    }, 120_000);

    it('every way of making a VM gives it the vars of the moment; a running VM keeps what it booted with', async () => {
      const c = await newClient();
      await c.put({ WHO: 'v1', SHARED: 'kept' });
      const root = await c.newRoot();
      expect(await c.printenv(root, 'WHO')).toBe('v1');
      const commit_id = (await c.request('POST', `/vm/${root}/commit`)).json.commit_id as string;
      expect((await c.request('POST', '/commit_tags', { tag_name: 'base', commit_id })).status).toBe(201);
      expect((await c.request('POST', '/repositories', { name: 'base' })).status).toBe(201);
      expect((await c.request('POST', '/repositories/base/tags', { tag_name: 'v1', commit_id })).status).toBe(201);

      await c.put({ WHO: 'v2' });
      const children = {
        'from_commit {commit_id}': c.made(await c.request('POST', '/vm/from_commit', { commit_id })),
        'from_commit {tag_name}': c.made(await c.request('POST', '/vm/from_commit', { tag_name: 'base' })),
        '/vm/{vm id}/branch': c.made(await c.request('POST', `/vm/${root}/branch`)),
        '/vm/{commit id}/branch': c.made(await c.request('POST', `/vm/${commit_id}/branch`)),
        'branch/by_vm': c.made(await c.request('POST', `/vm/branch/by_vm/${root}`)),
        'branch/by_commit': c.made(await c.request('POST', `/vm/branch/by_commit/${commit_id}`)),
        'branch/by_tag': c.made(await c.request('POST', '/vm/branch/by_tag/base')),
        'from_commit {ref}': c.made(await c.request('POST', '/vm/from_commit', { ref: 'base:v1' })),
        'branch/by_ref': c.made(await c.request('POST', '/vm/branch/by_ref/base/v1')),
      };
      for (const [how, vm] of Object.entries(children)) {
        expect({ how, WHO: await c.printenv(vm, 'WHO'), SHARED: await c.printenv(vm, 'SHARED') }).toEqual({ how, WHO: 'v2', SHARED: 'kept' });
      }
      // The running root was never touched, not even its /etc/environment.
      expect(await c.printenv(root, 'WHO')).toBe('v1');
      expect((await c.request('POST', `/vm/${root}/exec`, { command: ['cat', '/etc/environment'] })).json.stdout).toBe('SHARED=kept\nWHO=v1\n');

      // replace=true: the next VM has exactly the new set; the ones before keep theirs.
      await c.put({ WHO: 'v3' }, true);
      const next = c.made(await c.request('POST', `/vm/branch/by_commit/${commit_id}`));
      expect([await c.printenv(next, 'WHO'), await c.printenv(next, 'SHARED')]).toEqual(['v3', null]);
      expect(await c.printenv(children['branch/by_tag'], 'WHO')).toBe('v2');
      // Deleting the last one: the next VM has none of them.
      expect((await c.request('DELETE', '/env_vars/WHO')).status).toBe(204);
      const bare = c.made(await c.request('POST', '/vm/from_commit', { commit_id }));
      expect((await c.request('POST', `/vm/${bare}/exec`, { command: ['cat', '/etc/environment'] })).json.stdout).toBe('');
    }, 300_000);

    it("a VM gets its maker's vars, not those of the commit's owner", async () => {
      const [owner, other] = [await newClient(), await newClient()];
      await owner.put({ WHO: 'owner', OWNER_ONLY: 'x' });
      const root = await owner.newRoot();
      const commit_id = (await owner.request('POST', `/vm/${root}/commit`)).json.commit_id as string;
      expect((await owner.request('PATCH', `/commits/${commit_id}`, { is_public: true })).status).toBe(200);

      await other.put({ WHO: 'other' });
      const theirs = other.made(await other.request('POST', '/vm/from_commit', { commit_id }));
      expect([await other.printenv(theirs, 'WHO'), await other.printenv(theirs, 'OWNER_ONLY')]).toEqual(['other', null]);
    }, 120_000);
  });
});

/** The same on the qemu driver, for a new root and one branch (QEMU runs under TCG without usable KVM: seconds per boot). */
describe('env vars (HTTP, qemu driver)', () => {
  let arbor: TestArbor;
  let c: Client;

  beforeAll(async () => {
    arbor = await startTestArbor({ env: { HYPERVISOR: 'qemu' } });
    c = clientOf(arbor, (await issueKeyForNewOrg(arbor.infra.eventStore)).key);
  }, 300_000);
  afterAll(async () => {
    try {
      await c?.cleanUp();
    } finally {
      await arbor?.destroy();
    }
  }, 120_000);

  it('a new root and a child of its branch find the vars of their moment through exec; the running parent keeps its own', async () => {
    const vars = { WHO: 'first', EQUALS: 'a=b=', QUOTED: '"x"', SPACES: ' a  b ', UNICODE: 'wörld ✓ 🌳' };
    await c.put(vars);
    const root = await c.newRoot();
    for (const [name, value] of Object.entries(vars)) expect({ name, value: await c.printenv(root, name) }).toEqual({ name, value });

    await c.put({ WHO: 'second' });
    const child = c.made(await c.request('POST', `/vm/branch/by_vm/${root}`));
    for (const [name, value] of Object.entries({ ...vars, WHO: 'second' })) expect({ name, value: await c.printenv(child, name) }).toEqual({ name, value });
    expect(await c.printenv(root, 'WHO')).toBe('first');
  }, 300_000);
});
