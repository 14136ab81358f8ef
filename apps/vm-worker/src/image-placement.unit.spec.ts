import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadImageSettings, newCommandContext, uploadFileOf, uploadTreeOf } from '@arbor/application';
import { Image, ImageName, Vm, VM_CONFIG_DEFAULTS } from '@arbor/domain';
import { InMemoryDriver } from '@arbor/hypervisor';
import { tarOf } from '../../../test/support/tar-archives';
import { WorkerTestBed } from './testing/worker-test-bed';

/**
 * Two workers (two hosts) on one log: an image is built by the worker that claims its job, once,
 * and lives on that host; root VMs of it are placed there; a deleted image's files go from it.
 */
describe('base images across two hosts', () => {
  let bed: WorkerTestBed;
  let hosts: Record<'a' | 'b', InMemoryDriver>;
  let uploads: string;
  const context = () => newCommandContext({ org_id: 'org-1', actor_key_id: 'key-1' });

  beforeEach(() => {
    bed = new WorkerTestBed();
    hosts = { a: new InMemoryDriver(), b: new InMemoryDriver() };
    uploads = mkdtempSync(join(tmpdir(), 'arbor-uploads-'));
  });
  afterEach(async () => {
    await bed.destroy();
    rmSync(uploads, { recursive: true, force: true });
  });

  const start = (name: 'a' | 'b') => bed.start(hosts[name], name, { images: { ...loadImageSettings({}, uploads), uploadDir: uploads } });

  /**
   * What the API leaves for an upload: the tree it unpacked as the upload arrived (`rootfs/` and
   * `unpacked.json`, or only the reason it could not be unpacked), or, from an earlier version, the
   * tarball; then the name and the request.
   */
  async function uploadImage(image_name: string, upload: 'tree' | 'tarball' | { error: string } = 'tree'): Promise<string> {
    const image_id = randomUUID();
    mkdirSync(uploads, { recursive: true });
    if (upload === 'tarball') writeFileSync(uploadFileOf(uploads, image_id), await tarOf([{ name: 'etc/motd', content: `${image_name}\n` }]));
    else {
      const tree = uploadTreeOf(uploads, image_id);
      mkdirSync(tree);
      if (upload === 'tree') {
        mkdirSync(join(tree, 'rootfs', 'etc'), { recursive: true });
        writeFileSync(join(tree, 'rootfs', 'etc', 'motd'), `${image_name}\n`);
      }
      writeFileSync(join(tree, 'unpacked.json'), JSON.stringify(upload === 'tree' ? { entries: 2, bytes: image_name.length + 1, skipped_devices: 0, skipped_xattrs: 0 } : upload));
    }
    await bed.aggregates.handle(ImageName, { org_id: 'org-1', image_name }, { type: 'ReserveImageName', org_id: 'org-1', image_name, image_id, now: new Date().toISOString() }, context());
    const source = { type: 'upload' as const, upload_id: image_id, bytes: 1024 };
    await bed.aggregates.handle(Image, image_id, { type: 'RequestImageCreation', image_id, org_id: 'org-1', owner_id: 'key-1', image_name, source, size_mib: 512, size_rule: 'total', description: null, now: new Date().toISOString() }, context());
    return image_id;
  }

  async function settleImage(image_id: string) {
    for (let i = 0; i < 100 && !['completed', 'failed'].includes((await bed.aggregates.load(Image, image_id)).state.status); i++) await bed.settle();
    return (await bed.aggregates.load(Image, image_id)).state;
  }

  it('builds each image once, on one host, and places its VMs there', async () => {
    await Promise.all([start('a'), start('b')]);
    // The fourth was asked for by an earlier version, which kept the tarball: unpacked by the worker.
    const images = await Promise.all([uploadImage('one'), uploadImage('two'), uploadImage('three'), uploadImage('four', 'tarball')]);
    for (const image_id of images) {
      const state = await settleImage(image_id);
      expect(state.status).toBe('completed');
      const holder = state.worker_id as 'a' | 'b';
      const other = holder === 'a' ? 'b' : 'a';
      expect(hosts[holder].calls.filter((call) => call === `build ${image_id}`)).toHaveLength(1);
      expect(hosts[other].calls.filter((call) => call === `build ${image_id}`)).toHaveLength(0);
      expect(await hosts[other].getImage(image_id)).toBeNull();
      // The upload goes with its job (right after its outcome is recorded).
      const uploadLeft = () => existsSync(uploadTreeOf(uploads, image_id)) || existsSync(uploadFileOf(uploads, image_id));
      for (let i = 0; i < 100 && uploadLeft(); i++) await bed.settle();
      expect(uploadLeft()).toBe(false);

      const vm_id = randomUUID();
      await bed.aggregates.handle(
        Vm,
        vm_id,
        { type: 'RequestVmCreation', vm_id, org_id: 'org-1', owner_id: 'key-1', config: { ...VM_CONFIG_DEFAULTS, image_name: 'x' }, labels: null, env: {}, ip: 'fd00::1', image_id, now: new Date().toISOString() },
        context(),
      );
      await bed.settle();
      expect(await bed.placement(vm_id)).toEqual([holder]);
      expect(hosts[holder].calls).toContain(`create ${vm_id}`);
      expect((await bed.aggregates.load(Image, image_id)).state.uses).toEqual({ [vm_id]: true });

      // Deleted with its VM gone: the image's host removes its files.
      await bed.aggregates.handle(Vm, vm_id, { type: 'RequestVmDeletion' }, context());
      await bed.settle();
      expect((await bed.aggregates.load(Image, image_id)).state.uses).toEqual({ [vm_id]: false });
      await bed.aggregates.handle(Image, image_id, { type: 'DeleteImage', now: new Date().toISOString() }, context());
      await bed.settle();
      expect(await hosts[holder].getImage(image_id)).toBeNull();
    }
  });

  it('removes, as it starts, uploads a day old that no job took (the api stopped in between) or that the api was still receiving, and no other', async () => {
    mkdirSync(uploads, { recursive: true });
    const twoDaysAgo = new Date(Date.now() - 2 * 24 * 3600_000);
    const [abandoned, partial, fresh, abandonedTree, kept] = [randomUUID(), randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const aged = (path: string) => utimesSync(path, twoDaysAgo, twoDaysAgo);
    writeFileSync(uploadFileOf(uploads, abandoned), 'x');
    writeFileSync(`${uploadFileOf(uploads, partial)}.part`, 'x');
    writeFileSync(uploadFileOf(uploads, fresh), 'x');
    // Unpacked as received: a tree no job took, one half received (of a retry whose first attempt made the job), a fresh one.
    mkdirSync(join(uploadTreeOf(uploads, abandonedTree), 'rootfs', 'etc'), { recursive: true });
    const halfReceived = `${uploadTreeOf(uploads, kept)}.part-Xy12Ab`;
    mkdirSync(join(halfReceived, 'rootfs', 'etc'), { recursive: true });
    const keptImage = await uploadImage('kept');
    for (const path of [uploadFileOf(uploads, abandoned), `${uploadFileOf(uploads, partial)}.part`, uploadTreeOf(uploads, abandonedTree), halfReceived, uploadTreeOf(uploads, keptImage)]) aged(path);
    await start('a');
    expect(existsSync(uploadFileOf(uploads, abandoned))).toBe(false);
    expect(existsSync(`${uploadFileOf(uploads, partial)}.part`)).toBe(false);
    expect(existsSync(uploadTreeOf(uploads, abandonedTree))).toBe(false);
    expect(existsSync(halfReceived)).toBe(false);
    expect(existsSync(uploadFileOf(uploads, fresh))).toBe(true);
  });

  it('builds from the tree the api unpacked; a tree the api could not unpack fails its job with the reason', async () => {
    await start('a');
    const refused = await uploadImage('refused', { error: "entry '../x' points outside the root filesystem" });
    const state = await settleImage(refused);
    expect(state).toMatchObject({ status: 'failed', error: "entry '../x' points outside the root filesystem" });
    for (let i = 0; i < 100 && existsSync(uploadTreeOf(uploads, refused)); i++) await bed.settle();
    expect(existsSync(uploadTreeOf(uploads, refused))).toBe(false);
  });

  describe('an upload\'s job interrupted by a worker restart', () => {
    /** A job claimed by worker a (attempt 1) that never finished: a stopped at once. */
    async function interrupted(image_name: string): Promise<string> {
      const image_id = await uploadImage(image_name);
      await bed.aggregates.handle(Image, image_id, { type: 'StartImageBuild', worker_id: 'a', attempt: 1, now: new Date().toISOString() }, context());
      return image_id;
    }

    it('is built again from the tree, which waited in the upload directory', async () => {
      const image_id = await interrupted('resumed');
      await start('a');
      expect(await settleImage(image_id)).toMatchObject({ status: 'completed', attempt: 2 });
      expect(hosts.a.calls).toContain(`build ${image_id}`);
    });

    it('fails saying so when the interrupted build had handed the tree to the driver, which moved it', async () => {
      const image_id = await interrupted('taken');
      rmSync(join(uploadTreeOf(uploads, image_id), 'rootfs'), { recursive: true });
      await start('a');
      expect(await settleImage(image_id)).toMatchObject({ status: 'failed', error: expect.stringMatching(/the uploaded root filesystem is gone/) });
      for (let i = 0; i < 100 && existsSync(uploadTreeOf(uploads, image_id)); i++) await bed.settle();
      expect(existsSync(uploadTreeOf(uploads, image_id))).toBe(false);
    });
  });
});
