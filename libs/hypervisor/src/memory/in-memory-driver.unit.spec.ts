import { GuestFileError } from '../hypervisor-driver.port';
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
