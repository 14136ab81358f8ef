import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadImageSettings, newCommandContext, uploadFileOf } from '@arbor/application';
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

  /** What the API appends for an upload: the tarball in the upload directory, the name, the request. */
  async function uploadImage(image_name: string): Promise<string> {
    const image_id = randomUUID();
    mkdirSync(uploads, { recursive: true });
    writeFileSync(uploadFileOf(uploads, image_id), await tarOf([{ name: 'etc/motd', content: `${image_name}\n` }]));
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
    const images = await Promise.all(['one', 'two', 'three', 'four'].map(uploadImage));
    for (const image_id of images) {
      const state = await settleImage(image_id);
      expect(state.status).toBe('completed');
      const holder = state.worker_id as 'a' | 'b';
      const other = holder === 'a' ? 'b' : 'a';
      expect(hosts[holder].calls.filter((call) => call === `build ${image_id}`)).toHaveLength(1);
      expect(hosts[other].calls.filter((call) => call === `build ${image_id}`)).toHaveLength(0);
      expect(await hosts[other].getImage(image_id)).toBeNull();

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

  it('removes, as it starts, uploads a day old that no job took (the api stopped in between), and no other', async () => {
    mkdirSync(uploads, { recursive: true });
    const [abandoned, partial, fresh] = [randomUUID(), randomUUID(), randomUUID()];
    writeFileSync(uploadFileOf(uploads, abandoned), 'x');
    writeFileSync(`${uploadFileOf(uploads, partial)}.part`, 'x');
    writeFileSync(uploadFileOf(uploads, fresh), 'x');
    const twoDaysAgo = new Date(Date.now() - 2 * 24 * 3600_000);
    utimesSync(uploadFileOf(uploads, abandoned), twoDaysAgo, twoDaysAgo);
    utimesSync(`${uploadFileOf(uploads, partial)}.part`, twoDaysAgo, twoDaysAgo);
    await start('a');
    expect(existsSync(uploadFileOf(uploads, abandoned))).toBe(false);
    expect(existsSync(`${uploadFileOf(uploads, partial)}.part`)).toBe(false);
    expect(existsSync(uploadFileOf(uploads, fresh))).toBe(true);
  });
});
