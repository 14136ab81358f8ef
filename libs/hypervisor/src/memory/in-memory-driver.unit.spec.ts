import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GuestFileError, ImageInUseError, ImageNotFoundError } from '../hypervisor-driver.port';
import { imageSizeMib } from '../images/image-size';
import { machineSpec } from '../testing/machine-specs';
import { InMemoryDriver } from './in-memory-driver';

describe('InMemoryDriver readFile', () => {
  it('honours max_bytes as the real drivers do: up to the cap, then too_large', async () => {
    const driver = new InMemoryDriver();
    const spec = machineSpec();
    await driver.create(spec);
    await driver.writeFile(spec.vm_id, '/root/file', Buffer.alloc(10, 1));
    expect((await driver.readFile(spec.vm_id, '/root/file', { max_bytes: 10 })).length).toBe(10);
    const refused = await driver.readFile(spec.vm_id, '/root/file', { max_bytes: 9 }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(GuestFileError);
    expect(refused).toMatchObject({ reason: 'too_large', message: '/root/file is larger than the limit of 9 bytes' });
  });
});

describe('InMemoryDriver images', () => {
  it('builds, boots, holds and deletes images as the real drivers do', async () => {
    const driver = new InMemoryDriver();
    const root = mkdtempSync(join(tmpdir(), 'arbor-memory-image-'));
    try {
      writeFileSync(join(root, 'three-mib'), Buffer.alloc(3 * 1024 * 1024));
      const stages: string[] = [];
      const image = await driver.buildImage({ image_id: randomUUID(), rootfs_dir: root, extra_size_mib: 100 }, (stage) => stages.push(stage));
      expect(image.size_mib).toBe(imageSizeMib(3 * 1024 * 1024, 100));
      expect(stages).toEqual(['configuring', 'creating_disk']);
      expect(await driver.buildImage({ image_id: image.image_id, rootfs_dir: root, extra_size_mib: 1 })).toEqual(image);
      expect(await driver.getImage(image.image_id)).toEqual(image);

      const spec = machineSpec({ image_id: image.image_id, fs_size_mib: 1 });
      await driver.create(spec);
      await driver.commit(spec.vm_id, 'snap');
      expect((await driver.getSnapshot('snap'))?.fs_size_mib).toBe(image.size_mib);
      await expect(driver.deleteImage(image.image_id)).rejects.toMatchObject({ name: 'ImageInUseError', users: [spec.vm_id, 'snap'] });
      await driver.destroy(spec.vm_id);
      const child = machineSpec();
      await driver.startFromSnapshot('snap', child);
      await driver.deleteSnapshot('snap').catch(() => undefined); // still used by the child
      await expect(driver.deleteImage(image.image_id)).rejects.toBeInstanceOf(ImageInUseError);
      await driver.destroy(child.vm_id);
      await driver.deleteSnapshot('snap');
      await driver.deleteImage(image.image_id);
      await driver.deleteImage(image.image_id);
      expect(await driver.getImage(image.image_id)).toBeNull();
      await expect(driver.create(machineSpec({ image_id: image.image_id }))).rejects.toBeInstanceOf(ImageNotFoundError);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
