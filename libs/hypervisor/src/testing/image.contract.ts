import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { linkSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  GuestFileError,
  ImageInUseError,
  ImageNotFoundError,
  type HypervisorDriver,
  type ImageInfo,
  type MachineInfo,
} from '../hypervisor-driver.port';
import { execCollect, existing, rootFsSizeMib, stdoutOf } from './guest-probes';
import { machineSpec, snapshotMachineSpec } from './machine-specs';
import { busyboxRoot, minbaseRoot } from '../images/sample-roots';

const execFileAsync = promisify(execFile);

/** The root filesystems an image is built from here, and a file each holds of its own. */
interface RootKind {
  name: string;
  make: (dir: string, cacheDir: string) => void | Promise<void>;
  ownFile: string;
}

const KINDS: RootKind[] = [
  { name: 'a bare busybox-static root (no libc, no shell of its own but busybox, no /etc)', make: (dir) => busyboxRoot(dir), ownFile: '/bin/busybox' },
  { name: 'a Debian minbase root', make: (dir, cacheDir) => minbaseRoot(dir, cacheDir), ownFile: '/etc/debian_version' },
];

/** An SSH client key pair made by the host's ssh-keygen, for logging in as root. */
export async function clientKey(dir: string): Promise<{ path: string; publicKey: string }> {
  const path = join(dir, 'id_ed25519');
  await execFileAsync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'arbor-image-test', '-f', path]);
  return { path, publicKey: readFileSync(`${path}.pub`, 'utf8').trim() };
}

/** Runs a command over SSH as root, the way a user (through the edge) logs in. */
export async function overSsh(address: string, key: string, command: string): Promise<string> {
  const { stdout } = await execFileAsync('ssh', [
    '-i', key,
    '-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null',
    '-o', 'ConnectTimeout=60', '-o', 'LogLevel=ERROR',
    `root@${address}`, command,
  ], { timeout: 120_000 });
  return stdout;
}

/**
 * Images through the driver interface (buildImage, MachineSpec.image_id, getImage, deleteImage)
 * with roots that bring nothing Arbor needs in a guest: each boots, runs exec with the whole of
 * its semantics, reads and writes files, has its identity, lets root in over SSH with the VM's key,
 * commits and branches; the image cannot be deleted while a machine or snapshot uses it. One
 * machine per kind of root plus one branch child (qemu boots cost seconds of CPU under TCG).
 */
export function describeImageContract(driverName: string, open: () => Promise<HypervisorDriver>, cacheDir: string): void {
  describe(`images: ${driverName}`, () => {
    let driver: HypervisorDriver;
    let scratch: string;
    let key: { path: string; publicKey: string };
    const machines: string[] = [];
    const snapshots: string[] = [];
    const images: string[] = [];

    beforeAll(async () => {
      scratch = mkdtempSync(join(tmpdir(), 'arbor-image-contract-'));
      key = await clientKey(scratch);
      driver = await open();
      await driver.prepare();
    }, 15 * 60_000);

    afterAll(async () => {
      for (const vmId of machines) await driver?.destroy(vmId).catch(() => undefined);
      for (const id of snapshots) await driver?.deleteSnapshot(id).catch(() => undefined);
      for (const id of images) await driver?.deleteImage(id).catch(() => undefined);
      rmSync(scratch, { recursive: true, force: true });
    }, 5 * 60_000);

    it('refuses a root filesystem holding a hard link to a file outside it, keeping no image', async () => {
      const root = join(scratch, `root-${randomUUID()}`);
      busyboxRoot(root);
      const outside = join(scratch, `outside-${randomUUID()}`);
      writeFileSync(outside, 'a host file');
      linkSync(outside, join(root, 'bin/linked'));
      const image_id = randomUUID();
      await expect(driver.buildImage({ image_id, rootfs_dir: root, extra_size_mib: 0 })).rejects.toThrow(/hard links/);
      expect(await driver.getImage(image_id)).toBeNull();
    }, 5 * 60_000);

    describe.each(KINDS)('$name', (kind) => {
      const slow = 10 * 60_000;
      const imageId = randomUUID();
      const env = { IMAGE_VAR: 'from the machine', SPACED: 'a b  c' };
      let image: ImageInfo;
      let info: MachineInfo;
      let spec: ReturnType<typeof machineSpec>;
      const snapshotId = `image-${imageId}`;
      const child = snapshotMachineSpec({ env: { CHILD: 'yes' } });

      const root = async () => {
        const dir = join(scratch, `root-${randomUUID()}`);
        await kind.make(dir, cacheDir);
        return dir;
      };

      it('builds the image once per id, its size the root filesystem plus the space asked for', async () => {
        const stages: string[] = [];
        image = await driver.buildImage({ image_id: imageId, rootfs_dir: await root(), extra_size_mib: 200 }, (stage) => stages.push(stage));
        images.push(imageId);
        expect(image).toMatchObject({ image_id: imageId });
        expect(image.size_mib).toBeGreaterThanOrEqual(200 + 64);
        expect(stages.length).toBeGreaterThan(0);
        expect(await driver.getImage(imageId)).toEqual(image);
        // Built: a second build of the id is the same image, whatever directory it is given.
        expect(await driver.buildImage({ image_id: imageId, rootfs_dir: await root(), extra_size_mib: 1 })).toEqual(image);
        expect(await driver.getImage(randomUUID())).toBeNull();
      }, slow);

      it('boots a machine of it, whose disk is at least the image size', async () => {
        spec = machineSpec({ env, image_id: imageId, image_name: 'custom', fs_size_mib: 64, identity: { hostname: `img-${imageId.slice(0, 8)}`, ssh_authorized_key: key.publicKey } });
        info = await driver.create(spec);
        machines.push(spec.vm_id);
        expect(info).toMatchObject({ vm_id: spec.vm_id, state: 'running' });
        expect(await existing(driver, spec.vm_id, [kind.ownFile])).toEqual([kind.ownFile]);
        // df inside counts its own metadata out: most of the image's size is there.
        expect(await rootFsSizeMib(driver, spec.vm_id)).toBeGreaterThanOrEqual(image.size_mib * 0.75);
      }, slow);

      it('runs exec with exit codes, ordered output, argv without a shell, the environment, working dir, stdin and timeout', async () => {
        const vm = spec.vm_id;
        expect((await execCollect(driver, vm, { argv: ['true'] })).exit_code).toBe(0);
        expect((await execCollect(driver, vm, { argv: ['sh', '-c', 'exit 3'] })).exit_code).toBe(3);
        expect((await execCollect(driver, vm, { argv: ['/no/such/program'] })).exit_code).toBe(127);
        const burst = await execCollect(driver, vm, { argv: ['sh', '-c', 'for i in 1 2 3 4 5; do echo o$i; echo e$i >&2; done'] });
        const lines = burst.chunks.flatMap((chunk) => chunk.data.toString().split('\n').filter(Boolean).map((line) => `${chunk.stream}:${line}`));
        expect(lines).toEqual([1, 2, 3, 4, 5].flatMap((i) => [`stdout:o${i}`, `stderr:e${i}`]));
        expect(await stdoutOf(driver, vm, { argv: ['echo', '$HOME', '*', 'a;b'] })).toBe('$HOME * a;b\n');
        const environment = await stdoutOf(driver, vm, {
          argv: ['sh', '-c', 'echo "$IMAGE_VAR|$SPACED|$OWN|$HOME|$PATH"'],
          env: { OWN: 'exec', IMAGE_VAR: 'overridden' },
        });
        expect(environment).toBe('overridden|a b  c|exec|/root|/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n');
        expect(await stdoutOf(driver, vm, { argv: ['pwd'], working_dir: '/etc' })).toBe('/etc\n');
        expect(await stdoutOf(driver, vm, { argv: ['cat'], stdin: 'fed ✓\n' })).toBe('fed ✓\n');
        expect((await execCollect(driver, vm, { argv: ['sleep', '300'], timeout_secs: 1 })).exit_code).toBe(124);
      }, slow);

      it('reads and writes guest files', async () => {
        const vm = spec.vm_id;
        const content = randomBytes(70_000);
        await driver.writeFile(vm, '/root/blob', content, { mode: 0o600 });
        expect((await driver.readFile(vm, '/root/blob')).equals(content)).toBe(true);
        expect(await stdoutOf(driver, vm, { argv: ['stat', '-c', '%a %s', '/root/blob'] })).toBe(`600 ${content.length}\n`);
        await driver.writeFile(vm, '/srv/deep/file', Buffer.from('made'), { create_dirs: true });
        expect((await driver.readFile(vm, '/srv/deep/file')).toString()).toBe('made');
        await expect(driver.readFile(vm, '/no/such/file')).rejects.toMatchObject({ reason: 'not_found' });
        const parentless = await driver.writeFile(vm, '/no/such/dir/file', Buffer.from('x')).catch((error: unknown) => error);
        expect(parentless).toBeInstanceOf(GuestFileError);
        expect(parentless).toMatchObject({ reason: 'parent_missing' });
      }, slow);

      it("has the machine's identity and lets root in over SSH with the machine's key, with the machine's environment", async () => {
        const vm = spec.vm_id;
        expect(await stdoutOf(driver, vm, { argv: ['uname', '-n'] })).toBe(`${spec.identity.hostname}\n`);
        expect(await stdoutOf(driver, vm, { argv: ['cat', '/etc/hostname'] })).toBe(`${spec.identity.hostname}\n`);
        expect((await stdoutOf(driver, vm, { argv: ['cat', '/root/.ssh/authorized_keys'] })).trim()).toBe(key.publicKey);
        expect(await stdoutOf(driver, vm, { argv: ['head', '-n', '1', '/etc/ssh/ssh_host_ed25519_key'] })).toBe('-----BEGIN OPENSSH PRIVATE KEY-----\n');
        const hostKey = (await stdoutOf(driver, vm, { argv: ['cat', '/etc/ssh/ssh_host_ed25519_key.pub'] })).split(' ')[1];
        const session = await overSsh(info.addresses!.ipv6, key.path, 'echo "$IMAGE_VAR|$SPACED"; id -u; cat /etc/ssh/ssh_host_ed25519_key.pub');
        const [vars, uid, seenKey] = session.split('\n');
        expect(vars).toBe('from the machine|a b  c');
        expect(uid).toBe('0');
        expect(seenKey.split(' ')[1]).toBe(hostKey);
      }, slow);

      it('commits the machine and starts a branch child from the commit, with its own identity, served over SSH', async () => {
        const vm = spec.vm_id;
        child.identity = { ...child.identity, ssh_authorized_key: key.publicKey };
        await driver.writeFile(vm, '/root/before-commit', Buffer.from('kept'));
        await driver.commit(vm, snapshotId);
        snapshots.push(snapshotId);
        await driver.writeFile(vm, '/root/after-commit', Buffer.from('not kept'));
        const started = await driver.startFromSnapshot(snapshotId, child);
        machines.push(child.vm_id);
        expect(started).toMatchObject({ vm_id: child.vm_id, state: 'running' });
        expect(await existing(driver, child.vm_id, ['/root/before-commit', '/root/after-commit', kind.ownFile])).toEqual([
          '/root/before-commit',
          kind.ownFile,
        ]);
        expect(await stdoutOf(driver, child.vm_id, { argv: ['sh', '-c', 'uname -n; echo "$CHILD"'] })).toBe(`${child.identity.hostname}\nyes\n`);
        const hostKey = (vmId: string) => stdoutOf(driver, vmId, { argv: ['cat', '/etc/ssh/ssh_host_ed25519_key.pub'] });
        expect(await hostKey(child.vm_id)).not.toBe(await hostKey(vm));
        // Its sshd (restored from the source's memory) serves the child's host key and environment.
        const [vars, seenKey] = (await overSsh(started.addresses!.ipv6, key.path, 'echo "$CHILD|$IMAGE_VAR"; cat /etc/ssh/ssh_host_ed25519_key.pub')).split('\n');
        expect(vars).toBe('yes|');
        expect(seenKey).toBe((await hostKey(child.vm_id)).trim());
      }, slow);

      it('refuses to delete the image while a machine or a snapshot uses it, and deletes it once none does', async () => {
        const inUse = await driver.deleteImage(imageId).catch((error: unknown) => error);
        expect(inUse).toBeInstanceOf(ImageInUseError);
        expect((inUse as ImageInUseError).users).toEqual(expect.arrayContaining([spec.vm_id]));
        expect(await driver.getImage(imageId)).toEqual(image);
        await driver.destroy(spec.vm_id);
        await driver.destroy(child.vm_id);
        // The snapshot still sits on the image.
        await expect(driver.deleteImage(imageId)).rejects.toMatchObject({ name: 'ImageInUseError', users: [snapshotId] });
        await driver.deleteSnapshot(snapshotId);
        await driver.deleteImage(imageId);
        expect(await driver.getImage(imageId)).toBeNull();
        await driver.deleteImage(imageId); // idempotent
        await expect(driver.create(machineSpec({ image_id: imageId }))).rejects.toBeInstanceOf(ImageNotFoundError);
      }, slow);
    });
  });
}
