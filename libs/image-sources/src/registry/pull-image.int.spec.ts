import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pushTestImage } from '../../../../test/support/oci-image';
import { startTestRegistry, type TestRegistry } from '../../../../test/support/test-registry';
import { ExtractionBudget } from '../tar/safe-extractor';
import { pullImage } from './pull-image';
import { RegistryClient } from './registry-client';

/**
 * Pulls from Debian's docker-registry, started here, an image skopeo pushed there from an OCI
 * layout the test built (an index with an arm64 decoy, a gzip and a zstd layer, a whiteout and an
 * opaque directory): anonymously, and through the bearer-token flow.
 */
describe('pulling an image from a registry (docker-registry, pushed with skopeo)', () => {
  let open: TestRegistry;
  let guarded: TestRegistry;
  let work: string;

  beforeAll(async () => {
    [open, guarded] = await Promise.all([startTestRegistry(), startTestRegistry({ tokenAuth: true })]);
    await pushTestImage(open.host, 'arbor/test', 'v1');
    await pushTestImage(guarded.host, 'arbor/test', 'v1', guarded.pushCredentials);
  }, 120_000);
  afterAll(async () => {
    await open?.stop();
    await guarded?.stop();
  });
  beforeEach(() => (work = mkdtempSync(join(tmpdir(), 'arbor-pull-'))));
  afterEach(() => rmSync(work, { recursive: true, force: true }));

  async function pull(registry: TestRegistry, reference: string, options: { maxDownloadBytes?: number } = {}) {
    const rootfs = join(work, 'rootfs');
    mkdirSync(rootfs);
    const stages = new Set<string>();
    const client = new RegistryClient({ insecureRegistries: [registry.host] });
    const report = await pullImage(`${registry.host}/${reference}`, rootfs, {
      client,
      scratchDir: join(work, 'layers'),
      maxDownloadBytes: options.maxDownloadBytes ?? 1 << 30,
      budget: new ExtractionBudget(1 << 30, 100_000),
      onProgress: (progress) => stages.add(progress.stage),
    });
    return { rootfs, report, stages };
  }

  function expectTheImage(rootfs: string) {
    expect(readFileSync(join(rootfs, 'hello.txt'), 'utf8')).toBe('hello from the registry image\n');
    expect(existsSync(join(rootfs, 'etc/removed'))).toBe(false);
    expect(existsSync(join(rootfs, 'etc/passwd'))).toBe(true);
    expect(readdirSync(join(rootfs, 'opt/data'))).toEqual(['new']);
    expect(existsSync(join(rootfs, 'wrong-platform'))).toBe(false);
    expect(readFileSync(join(rootfs, 'bin/busybox')).equals(readFileSync('/bin/busybox'))).toBe(true);
  }

  it('unpacks the linux/amd64 image, upper layer over lower, whiteouts and the opaque directory applied', async () => {
    const { rootfs, report, stages } = await pull(open, 'arbor/test:v1');
    expectTheImage(rootfs);
    expect(report).toMatchObject({ layers: 2, manifest_digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) });
    expect([...stages]).toEqual(['downloading', 'extracting']);
    expect(existsSync(join(work, 'layers'))).toBe(false);
  });

  it('pulls by digest, the manifest checked against it', async () => {
    const { report } = await pull(open, 'arbor/test:v1');
    rmSync(join(work, 'rootfs'), { recursive: true });
    const pinned = await pull(open, `arbor/test@${report.manifest_digest}`);
    expectTheImage(pinned.rootfs);
  });

  it('gets a pull token from the registry\'s token service when challenged (anonymous)', async () => {
    guarded.tokenRequests.length = 0;
    const { rootfs } = await pull(guarded, 'arbor/test:v1');
    expectTheImage(rootfs);
    expect(guarded.tokenRequests).toEqual([{ scope: 'repository:arbor/test:pull', authenticated: false }]);
  });

  it('says what is missing: an unknown repository or tag', async () => {
    await expect(pull(open, 'arbor/none:v1')).rejects.toThrow(/not found/);
    rmSync(join(work, 'rootfs'), { recursive: true });
    await expect(pull(open, 'arbor/test:v2')).rejects.toThrow(/not found/);
  });

  it('refuses an image larger than the download cap before downloading it', async () => {
    await expect(pull(open, 'arbor/test:v1', { maxDownloadBytes: 1000 })).rejects.toThrow(/more than the limit/);
  });

  it('speaks HTTPS to registries not configured as insecure', async () => {
    const rootfs = join(work, 'rootfs');
    mkdirSync(rootfs);
    const client = new RegistryClient({});
    await expect(
      pullImage(`${open.host}/arbor/test:v1`, rootfs, { client, scratchDir: join(work, 'layers'), maxDownloadBytes: 1 << 30, budget: new ExtractionBudget(1 << 30, 1000) }),
    ).rejects.toThrow();
  });
});
