import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { EventStoreDbEventStore } from '@arbor/event-store/eventstoredb';
import { startEsdbFake, type EsdbFake } from '@arbor/event-store/testing';
import { startMongoFake, type MongoFake } from '@arbor/read-models/testing';
import { type ProcessTrio, startProcessTrio } from '../support/processes';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * The worker as it runs on another host: its own process and data directory, sharing only the
 * stores (EventStoreDB, and MongoDB, which holds the key store) and the installation's secrets key
 * (ARBOR_SECRETS_KEY), as api replicas share it. It opens what the api sealed (a new VM's env
 * vars, an exec's env and stdin, a file's content) and seals what it writes (a file read).
 */
describe('secrets between the api and a worker in separate processes (EventStoreDB + MongoDB, sandbox)', () => {
  let esdb: EsdbFake;
  let mongo: MongoFake;
  let trio: ProcessTrio;
  const values = { envVar: `env-var-${randomBytes(8).toString('hex')}`, execEnv: `exec-env-${randomBytes(8).toString('hex')}`, stdin: `stdin-${randomBytes(8).toString('hex')}`, file: `file-${randomBytes(8).toString('hex')}` };

  beforeAll(async () => {
    [esdb, mongo] = await Promise.all([startEsdbFake(), startMongoFake()]);
    const env = { EVENTSTORE_URL: esdb.connectionString, MONGODB_URL: mongo.url, ARBOR_SECRETS_KEY: randomBytes(32).toString('hex') };
    trio = await startProcessTrio({ env, dataDirs: 'separate' });
  }, 320_000);
  afterAll(async () => {
    await trio?.stop();
    await Promise.all([esdb?.stop(), mongo?.stop()]);
  });

  it("runs what the api sealed, in clear in the machine, and keeps every secret sealed in the log", async () => {
    expect((await trio.call('PUT', '/api/v1/env_vars', { vars: { DB_PASSWORD: values.envVar } })).status).toBe(200);
    const vm = (await trio.call('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: { mem_size_mib: 256 } })).json.vm_id;

    const exec = await trio.call('POST', `/api/v1/vm/${vm}/exec`, {
      command: ['sh', '-c', 'printf %s "$DB_PASSWORD" | sha256sum; printf %s "$TOKEN" | sha256sum; sha256sum'],
      env: { TOKEN: values.execEnv },
      stdin: values.stdin,
    });
    expect(exec.json.stdout.split('\n').map((line: string) => line.split(' ')[0])).toEqual([sha256(values.envVar), sha256(values.execEnv), sha256(values.stdin), '']);
    expect((await trio.call('PUT', `/api/v1/vm/${vm}/files`, { path: '/root/secret.txt', content_b64: Buffer.from(values.file).toString('base64') })).status).toBe(200);
    const read = await trio.call('GET', `/api/v1/vm/${vm}/files?path=/root/secret.txt`);
    expect(Buffer.from(read.json.content_b64, 'base64').toString()).toBe(values.file);

    const events = new EventStoreDbEventStore(esdb.connectionString);
    const log = JSON.stringify(await events.readAll());
    await events.close();
    for (const value of Object.values(values)) {
      for (const form of [value, Buffer.from(value).toString('base64')]) expect({ form, inLog: log.includes(form) }).toEqual({ form, inLog: false });
    }
    // The keys live in MongoDB, not in any process's data directory.
    for (const dir of Object.values(trio.dirs)) expect(existsSync(join(dir, 'secret-keys.db'))).toBe(false);
    await trio.call('DELETE', `/api/v1/vm/${vm}`);
  }, 120_000);
});
