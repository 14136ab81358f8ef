import { existsSync, mkdirSync, mkdtempSync, openAsBlob, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AggregateRepository, EventSecrets, newCommandContext, uploadTreeOf } from '@arbor/application';
import { deterministicUuid, Image, ImageName } from '@arbor/domain';
import { InMemoryDriver } from '@arbor/hypervisor';
import { VmWorker } from '../../apps/vm-worker/src/vm-worker';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';
import { issueKeyForNewOrg, type IssuedTestKey } from '../support/issue-key';
import { pushTestImage } from '../support/oci-image';
import { pollUntil } from '../support/poll-until';
import { itUnless } from '../support/skip-unless';
import { startTestS3, type TestS3 } from '../support/s3-server';
import { busyboxRootTar, gzip, MINBASE_ROOTFS, tarOf, zstd } from '../support/tar-archives';
import { startTestRegistry, type TestRegistry } from '../support/test-registry';

/**
 * The five image operations over HTTP, end to end through the worker's image job, on a real
 * registry (Debian's docker-registry, the image pushed with skopeo), a real S3-compatible server
 * (s3rver) and real tarballs; the in-memory hypervisor builds the images (it keeps their small
 * files, so a VM of an image shows them through the files API). The drivers' own images (sandbox,
 * qemu) are tested with the drivers (images-boot.e2e.spec.ts).
 */
describe('base images (HTTP)', () => {
  let arbor: TestArbor;
  let registry: TestRegistry;
  let s3: TestS3;
  let driver: InMemoryDriver;
  let work: string;
  let other: IssuedTestKey;
  const UPLOAD_CAP_MIB = 300;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'arbor-images-e2e-'));
    [registry, s3] = await Promise.all([startTestRegistry(), startTestS3(['roots'])]);
    await pushTestImage(registry.host, 'arbor/test', 'v1');
    driver = new InMemoryDriver();
    arbor = await startTestArbor({
      driver,
      env: { ...s3.env, ARBOR_REGISTRY_INSECURE: registry.host, ARBOR_IMAGE_ARCHIVE_MAX_MIB: String(UPLOAD_CAP_MIB), ARBOR_RESYNC_INTERVAL_MS: '500' },
    });
    other = await issueKeyForNewOrg(arbor.infra.eventStore);
  }, 120_000);
  afterAll(async () => {
    await arbor?.destroy();
    await registry?.stop();
    await s3?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  const call = (method: string, path: string, body?: unknown, key?: string) => arbor.request(method, path, { body, key });
  /** What waits in the upload directory (none before the first upload made it). */
  const uploads = () => (existsSync(arbor.config.images.uploadDir) ? readdirSync(arbor.config.images.uploadDir) : []);
  /** The worker deletes an upload right after its job's outcome is recorded: soon after the status shows it. */
  const uploadsGone = () => pollUntil(async () => uploads().length === 0, { timeoutMs: 10_000 });

  async function upload(image_name: string, file: string, options: { field?: string; key?: string; size_mib?: number } = {}) {
    const form = new FormData();
    form.append(options.field ?? 'file', await openAsBlob(file), 'root.tar');
    const query = new URLSearchParams({ image_name, ...(options.size_mib ? { size_mib: String(options.size_mib) } : {}) });
    const response = await fetch(`${arbor.url}/api/v1/images/upload?${query}`, { method: 'POST', headers: { authorization: `Bearer ${options.key ?? arbor.adminKey}` }, body: form });
    return { status: response.status, json: (await response.json().catch(() => undefined)) as any };
  }

  /** Polls the name's status until its job has ended; returns the last answer. */
  async function finished(image_name: string, key?: string) {
    let last: any;
    await pollUntil(
      async () => {
        last = (await call('GET', `/api/v1/images/${image_name}/status`, undefined, key)).json;
        return last?.status === 'completed' || last?.status === 'failed';
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    return last;
  }

  async function bootFrom(image_name: string, key?: string) {
    const res = await call('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: { image_name } }, key);
    expect(res.status).toBe(201);
    return res.json.vm_id as string;
  }

  const readFile = async (vm_id: string, path: string, key?: string) => {
    const res = await call('GET', `/api/v1/vm/${vm_id}/files?path=${encodeURIComponent(path)}`, undefined, key);
    return res.status === 200 ? Buffer.from(res.json.content_b64, 'base64').toString() : res.status;
  };

  it('builds an image from a registry (index → linux/amd64, gzip and zstd layers, whiteout, opaque directory); new_root boots it', async () => {
    const created = await call('POST', '/api/v1/images/create', { image_name: 'from-registry', source: { type: 'docker', image_ref: `${registry.host}/arbor/test:v1` }, size_mib: 100 });
    expect(created.status).toBe(201);
    expect(created.json).toEqual({ job_id: expect.any(String), image_name: 'from-registry', status: 'creating' });
    const status = await finished('from-registry');
    expect(status).toMatchObject({ image_name: 'from-registry', status: 'completed', base_image_id: created.json.job_id });
    expect(status.error_message).toBeUndefined();
    // The job's stages went through the log, in order.
    const stages = (await arbor.infra.eventStore.readStream(Image.stream(created.json.job_id))).filter((event) => event.type === 'ImageBuildProgressed').map((event) => (event.data as { stage: string }).stage);
    expect([...new Set(stages)]).toEqual(['downloading', 'extracting', 'configuring', 'creating_disk']);

    const listed = await call('GET', '/api/v1/images');
    expect(listed.json.images).toContainEqual({
      base_image_id: created.json.job_id,
      image_name: 'from-registry',
      owner_id: arbor.adminKey.slice(0, 36),
      is_public: false,
      source_type: 'docker',
      size_mib: status.size_mib,
      created_at: expect.any(String),
      description: null,
    });
    expect(status.size_mib).toBeGreaterThanOrEqual(100);

    const vm = await bootFrom('from-registry');
    expect(await readFile(vm, '/hello.txt')).toBe('hello from the registry image\n');
    expect(await readFile(vm, '/opt/data/new')).toBe('from the upper layer\n');
    expect(await readFile(vm, '/etc/removed')).toBe(404);
    expect(await readFile(vm, '/opt/data/old-1')).toBe(404);
    expect(await readFile(vm, '/wrong-platform')).toBe(404);
    expect((await call('DELETE', `/api/v1/vm/${vm}`)).status).toBe(200);
  });

  it('builds an image from an uploaded busybox-static root (part `tarball`, gzip), the disk as large as size_mib', async () => {
    const tar = join(work, 'busybox.tar');
    busyboxRootTar(tar, { '/etc/motd': 'busybox image\n' });
    writeFileSync(`${tar}.gz`, gzip(require('node:fs').readFileSync(tar)));
    const uploaded = await upload('busybox', `${tar}.gz`, { field: 'tarball', size_mib: 600 });
    expect(uploaded).toEqual({ status: 201, json: { job_id: expect.any(String), image_name: 'busybox', status: 'creating' } });
    expect(await finished('busybox')).toMatchObject({ status: 'completed', size_mib: 600 });
    const vm = await bootFrom('busybox');
    expect(await readFile(vm, '/etc/motd')).toBe('busybox image\n');
    expect((await call('DELETE', `/api/v1/vm/${vm}`)).status).toBe(200);
    // The tarball waited in the upload directory only until its job ended.
    await uploadsGone();
  });

  itUnless(existsSync(MINBASE_ROOTFS) ? null : `no Debian minbase root at ${MINBASE_ROOTFS} (the sandbox's base root filesystem, which npm run prepare-images builds)`)('builds an image from an uploaded Debian minbase root (zstd)', async () => {
    const tar = join(work, 'minbase.tar');
    require('node:child_process').execFileSync('sh', ['-c', `tar --numeric-owner -C ${MINBASE_ROOTFS} -cf - . | zstd -q -1 -o ${tar}.zst`]);
    expect((await upload('debian-minbase', `${tar}.zst`)).status).toBe(201);
    const status = await finished('debian-minbase');
    expect(status).toMatchObject({ status: 'completed' });
    // The root filesystem is larger than the default 512 MiB? Then the disk is its size; never smaller than asked.
    expect(status.size_mib).toBeGreaterThanOrEqual(512);
    const vm = await bootFrom('debian-minbase');
    expect(await readFile(vm, '/etc/debian_version')).toMatch(/^12\./);
    expect((await call('DELETE', `/api/v1/vm/${vm}`)).status).toBe(200);
  }, 120_000);

  it('answers 413 for an upload over the cap, and keeps nothing: no job, no file', async () => {
    await uploadsGone();
    const big = join(work, 'big.tar');
    writeFileSync(big, Buffer.alloc((UPLOAD_CAP_MIB + 5) * 1024 * 1024));
    const head = await arbor.infra.eventStore.headPosition();
    const answer = await upload('too-big', big);
    expect(answer).toEqual({ status: 413, json: { success: false, error: `the upload is larger than the limit of ${UPLOAD_CAP_MIB} MiB (ARBOR_IMAGE_ARCHIVE_MAX_MIB)` } });
    const appended = await arbor.infra.eventStore.readAll({ after_position: head });
    expect(appended.filter((event) => event.type.startsWith('Image'))).toEqual([]);
    expect((await call('GET', '/api/v1/images/too-big/status')).status).toBe(404);
    expect(uploads()).toEqual([]);

    // Sent without a length (chunked): cut off at the cap as it streams in.
    const boundary = 'arbor-test-boundary';
    const chunk = Buffer.alloc(1024 * 1024);
    let sent = 0;
    const body = new ReadableStream({
      pull(controller) {
        if (sent === 0) controller.enqueue(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="root.tar"\r\nContent-Type: application/x-tar\r\n\r\n`));
        if (sent++ < UPLOAD_CAP_MIB + 50) controller.enqueue(chunk);
        else {
          controller.enqueue(Buffer.from(`\r\n--${boundary}--\r\n`));
          controller.close();
        }
      },
    });
    const streamed = await fetch(`${arbor.url}/api/v1/images/upload?image_name=too-big`, {
      method: 'POST',
      headers: { authorization: `Bearer ${arbor.adminKey}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body,
      duplex: 'half',
    } as RequestInit).then(
      async (response) => ({ status: response.status, json: await response.json() }),
      (error: Error) => ({ status: 0, json: error.message }),
    );
    expect(streamed).toEqual({ status: 413, json: { success: false, error: `the upload is larger than the limit of ${UPLOAD_CAP_MIB} MiB (ARBOR_IMAGE_ARCHIVE_MAX_MIB)` } });
    // It stopped reading near the cap, not at the end of the body.
    expect(sent).toBeLessThan(UPLOAD_CAP_MIB + 50);
    expect((await call('GET', '/api/v1/images/too-big/status')).status).toBe(404);
    expect(uploads()).toEqual([]);
  });

  it('leaves nothing of an upload cut off before its end: no job, no tree', async () => {
    await uploadsGone();
    const tar = await tarOf(Array.from({ length: 400 }, (_, n) => ({ name: `usr/lib/f${n}`, content: Buffer.alloc(50_000, n % 251) })));
    const boundary = 'arbor-cut-off';
    let sent = 0;
    const body = new ReadableStream({
      pull(controller) {
        if (sent === 0) controller.enqueue(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="root.tar"\r\n\r\n`));
        // Half of the archive, then the client goes away.
        if (sent < tar.length / 2) controller.enqueue(tar.subarray(sent, (sent += 65536)));
        else controller.error(new Error('the client went away'));
      },
    });
    const cut = await fetch(`${arbor.url}/api/v1/images/upload?image_name=cut-off`, {
      method: 'POST',
      headers: { authorization: `Bearer ${arbor.adminKey}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body,
      duplex: 'half',
    } as RequestInit).then(
      (response) => response.status,
      () => 'cut off',
    );
    expect(cut).toBe('cut off');
    await uploadsGone();
    expect((await call('GET', '/api/v1/images/cut-off/status')).status).toBe(404);
  });

  it('answers 201 for an archive that cannot be unpacked as it arrives (a corrupt gzip stream); the job fails saying why, and nothing is kept', async () => {
    const good = gzip(await tarOf([{ name: 'etc/motd', content: Buffer.alloc(200_000, 1) }]));
    const corrupt = join(work, 'corrupt.tar.gz');
    writeFileSync(corrupt, Buffer.concat([good.subarray(0, good.length / 2), Buffer.alloc(100_000, 9)]));
    expect((await upload('corrupt', corrupt)).status).toBe(201);
    expect(await finished('corrupt')).toMatchObject({ status: 'failed', error_message: expect.stringMatching(/gzip stream is corrupt|not a readable tar/) });
    await uploadsGone();
  });

  it('replaces, on a retry of the same request (X-Idempotency-Key), what an attempt cut short between unpacking and asking for the job left', async () => {
    const key = 'upload-retry-1';
    const command_id = deterministicUuid(other.org_id, 'POST', '/api/v1/images/upload', key);
    const stale = uploadTreeOf(arbor.config.images.uploadDir, deterministicUuid(command_id, 'image'));
    mkdirSync(join(stale, 'rootfs', 'etc'), { recursive: true });
    writeFileSync(join(stale, 'rootfs', 'etc', 'motd'), 'stale\n');
    writeFileSync(join(stale, 'unpacked.json'), JSON.stringify({ entries: 2, bytes: 6, skipped_devices: 0, skipped_xattrs: 0 }));
    const tar = join(work, 'retry.tar');
    writeFileSync(tar, await tarOf([{ name: 'etc/motd', content: 'retried\n' }]));
    const form = new FormData();
    form.append('file', await openAsBlob(tar), 'root.tar');
    const retried = await fetch(`${arbor.url}/api/v1/images/upload?image_name=retried`, { method: 'POST', headers: { authorization: `Bearer ${other.key}`, 'x-idempotency-key': key }, body: form });
    expect(retried.status).toBe(201);
    expect(await finished('retried', other.key)).toMatchObject({ status: 'completed' });
    const vm = await bootFrom('retried', other.key);
    expect(await readFile(vm, '/etc/motd', other.key)).toBe('retried\n');
    expect((await call('DELETE', `/api/v1/vm/${vm}`, undefined, other.key)).status).toBe(200);
    await uploadsGone();
  });

  it('refuses bad uploads with a 400 that says why: no multipart, no file part, a bad size or name', async () => {
    expect((await call('POST', '/api/v1/images/upload?image_name=x', { not: 'multipart' })).status).toBe(400);
    const form = new FormData();
    form.append('other', 'text');
    await uploadsGone();
    const noFile = await fetch(`${arbor.url}/api/v1/images/upload?image_name=nofile`, { method: 'POST', headers: { authorization: `Bearer ${arbor.adminKey}` }, body: form });
    expect(noFile.status).toBe(400);
    expect(((await noFile.json()) as { error: string }).error).toMatch(/no file part named `file` or `tarball`/);
    const tar = join(work, 'small.tar');
    writeFileSync(tar, await tarOf([{ name: 'x', content: 'x' }]));
    expect((await upload('small', tar, { size_mib: 100 })).status).toBe(400);
    expect((await upload('bad name!', tar)).status).toBe(400);
    expect((await upload('default', tar)).json.error).toMatch(/built-in image's name/);
    expect(uploads()).toEqual([]);
  });

  it('refuses a tarball that climbs out with ../ (the job fails saying so) and neutralises absolute names and device nodes', async () => {
    const hostile = join(work, 'hostile.tar');
    writeFileSync(hostile, await tarOf([{ name: 'etc/passwd', content: 'root:x:0:0::/:/bin/sh\n' }, { name: `../../../../${work}/escaped`, content: 'owned' }]));
    expect((await upload('hostile', hostile)).status).toBe(201);
    const failed = await finished('hostile');
    expect(failed).toMatchObject({ status: 'failed', error_message: expect.stringMatching(/points outside the root filesystem/) });
    expect(existsSync(join(work, 'escaped'))).toBe(false);

    const tricky = join(work, 'tricky.tar');
    writeFileSync(
      tricky,
      zstd(
        await tarOf([
          { name: `${work}/absolute`, content: 'inside the image' },
          { name: 'dev/sda', type: 'block-device', devmajor: 8, devminor: 0 },
          { name: 'dev/mem', type: 'character-device', devmajor: 1, devminor: 1 },
          { name: 'etc/hostname', content: 'tricky\n' },
        ]),
      ),
    );
    expect((await upload('tricky', tricky)).status).toBe(201);
    expect(await finished('tricky')).toMatchObject({ status: 'completed' });
    expect(existsSync(join(work, 'absolute'))).toBe(false);
    const vm = await bootFrom('tricky');
    expect(await readFile(vm, `${work}/absolute`)).toBe('inside the image');
    expect(await readFile(vm, '/dev/sda')).toBe(404);
    expect((await call('DELETE', `/api/v1/vm/${vm}`)).status).toBe(200);
  });

  it('builds an image from a tarball in S3', async () => {
    const tar = join(work, 's3.tar');
    busyboxRootTar(tar, { '/etc/motd': 'from s3\n' });
    await s3.put('roots', 'images/busybox.tar.gz', gzip(require('node:fs').readFileSync(tar)));
    expect((await call('POST', '/api/v1/images/create', { image_name: 'from-s3', source: { type: 's3', bucket: 'roots', key: 'images/busybox.tar.gz' } })).status).toBe(201);
    expect(await finished('from-s3')).toMatchObject({ status: 'completed' });
    const vm = await bootFrom('from-s3');
    expect(await readFile(vm, '/etc/motd')).toBe('from s3\n');
    expect((await call('DELETE', `/api/v1/vm/${vm}`)).status).toBe(200);

    expect((await call('POST', '/api/v1/images/create', { image_name: 's3-missing', source: { type: 's3', bucket: 'roots', key: 'nothing.tar' } })).status).toBe(201);
    expect(await finished('s3-missing')).toMatchObject({ status: 'failed', error_message: 's3://roots/nothing.tar not found' });
  });

  it('refuses bad create requests: a bad source (400), a missing field (422), a name in use (409)', async () => {
    const bad = (body: unknown) => call('POST', '/api/v1/images/create', body);
    expect((await bad({ image_name: 'x', source: { type: 'ftp' } })).json.error).toBe('source.type must be "docker" or "s3"');
    expect((await bad({ image_name: 'x', source: { type: 'docker', image_ref: 'UPPER' } })).status).toBe(400);
    expect((await bad({ image_name: 'x', source: { type: 's3', bucket: 'B', key: 'k' } })).status).toBe(400);
    expect((await bad({ image_name: 'x', source: { type: 'docker', image_ref: 'a' }, size_mib: 40000 })).status).toBe(400);
    expect((await bad({ source: { type: 'docker', image_ref: 'a' } })).status).toBe(422);
    const reused = await bad({ image_name: 'from-registry', source: { type: 'docker', image_ref: `${registry.host}/arbor/test:v1` } });
    expect(reused).toMatchObject({ status: 409, json: { error: "image 'from-registry' already exists" } });
  });

  it('answers 409 for a name whose job is unfinished, and frees a failed job\'s name', async () => {
    driver.slowDown('build', 1500);
    try {
      expect((await call('POST', '/api/v1/images/create', { image_name: 'slow', source: { type: 'docker', image_ref: `${registry.host}/arbor/test:v1` } })).status).toBe(201);
      const again = await call('POST', '/api/v1/images/create', { image_name: 'slow', source: { type: 'docker', image_ref: `${registry.host}/arbor/test:v1` } });
      expect(again).toMatchObject({ status: 409, json: { error: expect.stringMatching(/still being created/) } });
      expect(await finished('slow')).toMatchObject({ status: 'completed' });
    } finally {
      driver.slowDown('build', 0);
    }
    // A failed job leaves its name free: a new job of the name goes, and the status is the newest's.
    expect((await call('POST', '/api/v1/images/create', { image_name: 'retry', source: { type: 'docker', image_ref: `${registry.host}/arbor/none:v1` } })).status).toBe(201);
    expect(await finished('retry')).toMatchObject({ status: 'failed', error_message: expect.stringMatching(/not found/) });
    expect((await call('POST', '/api/v1/images/create', { image_name: 'retry', source: { type: 'docker', image_ref: `${registry.host}/arbor/test:v1` } })).status).toBe(201);
    expect(await finished('retry')).toMatchObject({ status: 'completed' });
  });

  it('deletes an image: 409 while a VM uses it, 200 once none does, then 404; bad ids 400', async () => {
    const { json: status } = await call('GET', '/api/v1/images/from-registry/status');
    const vm = await bootFrom('from-registry');
    const inUse = await call('DELETE', `/api/v1/images/images/${status.base_image_id}`);
    expect(inUse).toMatchObject({ status: 409, json: { error: 'image is in use by 1 VM(s); delete them first' } });
    expect((await call('DELETE', `/api/v1/vm/${vm}`)).status).toBe(200);
    expect(await call('DELETE', `/api/v1/images/images/${status.base_image_id}`)).toMatchObject({ status: 200, json: { deleted: true, base_image_id: status.base_image_id } });
    expect((await call('DELETE', `/api/v1/images/images/${status.base_image_id}`)).status).toBe(404);
    expect((await call('DELETE', '/api/v1/images/images/not-a-uuid')).status).toBe(400);
    expect((await call('GET', '/api/v1/images/from-registry/status')).status).toBe(404);
    expect((await call('POST', '/api/v1/vm/new_root', { vm_config: { image_name: 'from-registry' } })).status).toBe(404);
    // Its worker removes its files once nothing on the host uses them.
    await pollUntil(async () => (await driver.getImage(status.base_image_id)) === null, { timeoutMs: 10_000 });
  });

  it('lets another org reuse a name; a public image is listed to and booted by every org, its own image of the name first', async () => {
    const source = { type: 'docker', image_ref: `${registry.host}/arbor/test:v1` };
    expect((await call('POST', '/api/v1/images/create', { image_name: 'shared', source })).status).toBe(201);
    expect((await call('POST', '/api/v1/images/create', { image_name: 'shared', source }, other.key)).status).toBe(201);
    const mine = await finished('shared');
    const theirs = await finished('shared', other.key);
    expect(mine.base_image_id).not.toBe(theirs.base_image_id);

    // Private: the other org neither lists nor boots nor deletes it (404).
    expect((await call('GET', '/api/v1/images', undefined, other.key)).json.images.map((image: any) => image.base_image_id)).not.toContain(mine.base_image_id);
    expect((await call('DELETE', `/api/v1/images/images/${mine.base_image_id}`, undefined, other.key)).status).toBe(404);

    expect(await call('PATCH', `/arbor/v1/images/${mine.base_image_id}`, { is_public: true })).toMatchObject({ status: 200, json: { is_public: true } });
    const seen = (await call('GET', '/api/v1/images', undefined, other.key)).json;
    expect(seen.images.map((image: any) => image.base_image_id)).toEqual(expect.arrayContaining([mine.base_image_id, theirs.base_image_id]));
    expect(seen.total).toBeGreaterThanOrEqual(2);
    // new_root in the other org boots its own "shared" first.
    const vm = await bootFrom('shared', other.key);
    const vmEvents = await arbor.infra.eventStore.readStream(`vm-${vm}`);
    expect((vmEvents[0].data as { image_id: string }).image_id).toBe(theirs.base_image_id);
    expect((await call('DELETE', `/api/v1/vm/${vm}`, undefined, other.key)).status).toBe(200);
    // Not its owner: 403.
    expect((await call('DELETE', `/api/v1/images/images/${mine.base_image_id}`, undefined, other.key))).toMatchObject({ status: 403 });

    // A public image of a name the org has none of: booted.
    expect((await call('POST', '/api/v1/images/create', { image_name: 'only-mine', source })).status).toBe(201);
    const onlyMine = await finished('only-mine');
    expect((await call('POST', '/api/v1/vm/new_root', { vm_config: { image_name: 'only-mine' } }, other.key)).status).toBe(404);
    await call('PATCH', `/arbor/v1/images/${onlyMine.base_image_id}`, { is_public: true });
    expect((await call('GET', '/api/v1/images/only-mine/status', undefined, other.key)).json).toMatchObject({ status: 'completed' });
    const borrowed = await bootFrom('only-mine', other.key);
    expect(await readFile(borrowed, '/hello.txt', other.key)).toBe('hello from the registry image\n');
    expect((await call('DELETE', `/api/v1/vm/${borrowed}`, undefined, other.key)).status).toBe(200);
  });

  it('lists newest first with limit (at most 100) and offset, and total', async () => {
    const all = (await call('GET', '/api/v1/images?limit=100')).json;
    const times = all.images.map((image: any) => image.created_at);
    expect(times).toEqual([...times].sort().reverse());
    const page = (await call('GET', '/api/v1/images?limit=1&offset=1')).json;
    expect(page).toMatchObject({ limit: 1, offset: 1, total: all.total });
    expect(page.images).toEqual([all.images[1]]);
    expect((await call('GET', '/api/v1/images?limit=500')).json.limit).toBe(100);
  });

  describe('a job survives a worker restart', () => {
    /** Stops the embedded worker, appends a job claimed by it at `attempt` (as if it died mid-build), starts a new worker. */
    async function interruptedJob(image_name: string, attempt: number): Promise<VmWorker> {
      await arbor.worker.stop();
      const aggregates = new AggregateRepository(arbor.infra.eventStore, EventSecrets.NONE);
      const image_id = require('node:crypto').randomUUID();
      const context = newCommandContext({ org_id: other.org_id, actor_key_id: other.key_id });
      await aggregates.handle(ImageName, { org_id: other.org_id, image_name }, { type: 'ReserveImageName', org_id: other.org_id, image_name, image_id, now: new Date().toISOString() }, context);
      const source = { type: 'docker' as const, image_ref: `${registry.host}/arbor/test:v1` };
      await aggregates.handle(Image, image_id, { type: 'RequestImageCreation', image_id, org_id: other.org_id, owner_id: other.key_id, image_name, source, size_mib: 0, size_rule: 'extra', description: null, now: new Date().toISOString() }, newCommandContext({ org_id: other.org_id, actor_key_id: other.key_id }));
      for (let n = 1; n <= attempt; n++) {
        await aggregates.handle(Image, image_id, { type: 'StartImageBuild', worker_id: arbor.config.workerId, attempt: n, now: new Date().toISOString() }, newCommandContext({ org_id: other.org_id, actor_key_id: null }));
      }
      await aggregates.handle(Image, image_id, { type: 'RecordImageProgress', stage: 'downloading', detail: null, now: new Date().toISOString() }, newCommandContext({ org_id: other.org_id, actor_key_id: null }));
      const worker = new VmWorker(arbor.infra.eventStore, driver, { stateFile: join(arbor.config.dataDir, 'worker', `${arbor.config.workerId}.json`), workerId: arbor.config.workerId, resyncIntervalMs: 500, images: arbor.config.images, dataDir: arbor.config.dataDir });
      await worker.start();
      return worker;
    }

    it('starts an interrupted job again (the next attempt) and finishes it', async () => {
      const worker = await interruptedJob('interrupted', 1);
      try {
        expect(await finished('interrupted', other.key)).toMatchObject({ status: 'completed' });
        const events = await arbor.infra.eventStore.readStream(Image.stream((await call('GET', '/api/v1/images/interrupted/status', undefined, other.key)).json.base_image_id));
        expect(events.filter((event) => event.type === 'ImageBuildStarted').map((event) => (event.data as { attempt: number }).attempt)).toEqual([1, 2]);
      } finally {
        await worker.stop();
      }
    });

    it('fails a job interrupted too often, saying so (never left creating)', async () => {
      const worker = await interruptedJob('crashy', arbor.config.images.buildAttempts);
      try {
        expect(await finished('crashy', other.key)).toMatchObject({ status: 'failed', error_message: expect.stringMatching(/interrupted 3 time\(s\)/) });
      } finally {
        await worker.stop();
      }
    });
  });

  it('keeps the upload directory private and empty between jobs', () => {
    expect(statSync(arbor.config.images.uploadDir).mode & 0o777).toBe(0o700);
  });
});
