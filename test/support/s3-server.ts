import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// s3rver ships no types.
const S3rver = require('s3rver') as new (options: object) => { run(): Promise<{ port: number }>; close(): Promise<void> };
import { freePort } from './processes';

export interface TestS3 {
  /** What ARBOR_S3_* say for it. */
  env: Record<string, string>;
  settings: { endpoint: string; region: string; accessKeyId: string; secretAccessKey: string; forcePathStyle: boolean };
  put(bucket: string, key: string, body: Buffer): Promise<void>;
  stop(): Promise<void>;
}

/**
 * An S3-compatible server (s3rver, from npm: S3's REST API with SigV4 over files) on a free
 * loopback port, with the buckets asked for; objects are put with the AWS SDK, as a user would.
 */
export async function startTestS3(buckets: string[]): Promise<TestS3> {
  const directory = mkdtempSync(join(tmpdir(), 'arbor-s3-'));
  const port = await freePort();
  const server = new S3rver({ address: '127.0.0.1', port, silent: true, directory, configureBuckets: buckets.map((name) => ({ name })) });
  await server.run();
  const settings = { endpoint: `http://127.0.0.1:${port}`, region: 'us-east-1', accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', forcePathStyle: true };
  const client = new S3Client({ ...settings, credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey }, requestChecksumCalculation: 'WHEN_REQUIRED' });
  return {
    env: { ARBOR_S3_ENDPOINT: settings.endpoint, ARBOR_S3_REGION: settings.region, ARBOR_S3_ACCESS_KEY_ID: settings.accessKeyId, ARBOR_S3_SECRET_ACCESS_KEY: settings.secretAccessKey },
    settings,
    async put(bucket, key, body) {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
    },
    async stop() {
      client.destroy();
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
