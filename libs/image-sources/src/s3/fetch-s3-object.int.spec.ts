import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestS3, type TestS3 } from '../../../../test/support/s3-server';
import { fetchS3Object } from './fetch-s3-object';

/** The AWS SDK's S3 client against an S3-compatible server (s3rver) started here. */
describe('fetching a root filesystem tarball from S3', () => {
  let s3: TestS3;
  let work: string;

  beforeAll(async () => {
    s3 = await startTestS3(['images']);
    await s3.put('images', 'roots/tiny.tar', Buffer.from('x'.repeat(10_000)));
  });
  afterAll(() => s3?.stop());
  beforeEach(() => (work = mkdtempSync(join(tmpdir(), 'arbor-s3-fetch-'))));
  afterEach(() => rmSync(work, { recursive: true, force: true }));

  it('streams the object into a file, reporting bytes as they come', async () => {
    const seen: number[] = [];
    const { bytes } = await fetchS3Object(s3.settings, 'images', 'roots/tiny.tar', join(work, 'out'), { maxBytes: 1 << 20, onBytes: (done) => seen.push(done) });
    expect(bytes).toBe(10_000);
    expect(readFileSync(join(work, 'out'), 'utf8')).toBe('x'.repeat(10_000));
    expect(seen.at(-1)).toBe(10_000);
  });

  it('says what is missing, and what is too large', async () => {
    await expect(fetchS3Object(s3.settings, 'images', 'roots/none.tar', join(work, 'out'), { maxBytes: 1 << 20 })).rejects.toThrow('s3://images/roots/none.tar not found');
    await expect(fetchS3Object(s3.settings, 'nobucket', 'x', join(work, 'out'), { maxBytes: 1 << 20 })).rejects.toThrow(/s3:\/\/nobucket\/x/);
    await expect(fetchS3Object(s3.settings, 'images', 'roots/tiny.tar', join(work, 'out'), { maxBytes: 1000 })).rejects.toThrow(/more than the limit/);
  });

  it('says when the credentials are refused', async () => {
    // s3rver knows one key id (S3RVER): another is refused as S3 refuses an unknown one.
    const wrong = { ...s3.settings, accessKeyId: 'NOT-A-KEY', secretAccessKey: 'wrong' };
    await expect(fetchS3Object(wrong, 'images', 'roots/tiny.tar', join(work, 'out'), { maxBytes: 1 << 20 })).rejects.toThrow(/refused access|Signature/);
  });
});
