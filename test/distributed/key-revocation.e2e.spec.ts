import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN_KEY_FILE } from '../../apps/api/src/bootstrap/bootstrap-admin-key';
import { httpClient } from '../support/api-client';
import { distEntry, freePort, type RunningProcess, startProcess, stopProcess, waitForOutput } from '../support/processes';

/**
 * A key revoked through one api process is refused by another within a second, though the other
 * had just accepted it (and keeps what it read of keys for a while): two api processes and a
 * projector, built entry points, sharing the embedded stores of one data directory.
 */
describe('revoking a key holds in every api process within a second', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'arbor-revoke-'));
  const running: RunningProcess[] = [];
  let first: ReturnType<typeof httpClient>;
  let second: ReturnType<typeof httpClient>;

  async function startApi(): Promise<ReturnType<typeof httpClient>> {
    const port = await freePort();
    const api = startProcess(distEntry('api'), { ARBOR_DATA_DIR: dataDir, PORT: String(port) });
    running.push(api);
    await waitForOutput(api, /listening on port/);
    return httpClient(`http://127.0.0.1:${port}`, readFileSync(join(dataDir, ADMIN_KEY_FILE), 'utf8').trim());
  }

  beforeAll(async () => {
    const projector = startProcess(distEntry('projector'), { ARBOR_DATA_DIR: dataDir });
    running.push(projector);
    first = await startApi();
    second = await startApi();
    await waitForOutput(projector, /following the log/);
  }, 120_000);
  afterAll(async () => {
    await Promise.all(running.map((process) => stopProcess(process)));
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('the other process refuses it within a second; the one that revoked it, at once', async () => {
    const made = await first('POST', '/arbor/v1/keys', { body: { label: 'ci-deploy' } });
    expect(made.status).toBe(201);
    const { api_key: key, api_key_id } = made.json;
    const validate = async (api: typeof first) => (await api('POST', '/api/v1/keys/validate', { key })).status;
    expect(await validate(first)).toBe(200);
    expect(await validate(second)).toBe(200);

    expect((await first('DELETE', `/arbor/v1/keys/${api_key_id}`)).status).toBe(204);
    const revokedAt = Date.now();
    expect(await validate(first)).toBe(401);
    let refusedAfter: number | null = null;
    while (refusedAfter === null && Date.now() - revokedAt < 5_000) {
      if ((await validate(second)) === 401) refusedAfter = Date.now() - revokedAt;
      else await new Promise((r) => setTimeout(r, 50));
    }
    expect(refusedAfter).not.toBeNull();
    expect(refusedAfter!).toBeLessThan(1_000);
    const listed = await second('GET', '/arbor/v1/keys');
    expect(listed.json.api_keys).toContainEqual(expect.objectContaining({ api_key_id, revoked_at: expect.any(String) }));
  }, 60_000);
});
