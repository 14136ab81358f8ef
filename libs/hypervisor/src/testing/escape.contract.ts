import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GuestFileError, type HypervisorDriver } from '../hypervisor-driver.port';
import { execCollect, stdoutOf } from './guest-probes';
import { machineSpec } from './machine-specs';

/** What the escape suite needs to know of a driver. */
export interface EscapeContractHooks {
  /**
   * 'shared-kernel': machines are confined processes of the host's own kernel (containers), so
   * every host-kernel attack is tried. 'hardware': a virtual machine with a kernel of its own, whose
   * kernel log, sysctls and devices are its own; there the suite checks that the host's files and
   * processes stay out of reach and that reads and output stay bounded.
   */
  boundary: 'shared-kernel' | 'hardware';
  /** The host file that holds a guest file of the machine's writable layer (shared-kernel drivers). */
  hostPathOf?: (vmId: string, guestPath: string) => string;
}

/** x86-64 and arm64 numbers of the system calls the probes make through perl's syscall(). */
const SYSCALLS: Record<string, { ptrace: number; mount: number }> = {
  x64: { ptrace: 101, mount: 165 },
  arm64: { ptrace: 117, mount: 40 },
};
const PTRACE_ATTACH = 16;
const O_WRONLY = 1;

/** What a refused write looks like: the file's owner is not mapped (EACCES) or its mount is read-only. */
const WRITE_REFUSED = /^(Permission denied|Read-only file system)$/;

/**
 * From inside a machine, through exec, each attack on the host tried in a harmless form (a value
 * read is written back, a few bytes are read, a file is only opened), asserting the exact failure
 * and, where it could pass by accident, first that the target is real (the sysctl shows the host's
 * value, the host can read its kernel log, the setuid bit is really set). One machine for the whole
 * suite: qemu boots cost seconds under TCG.
 */
export function describeEscapeContract(driverName: string, open: () => Promise<HypervisorDriver>, hooks: EscapeContractHooks): void {
  const sharedKernel = hooks.boundary === 'shared-kernel';

  describe(`escape attempts from a machine: ${driverName}`, () => {
    let driver: HypervisorDriver;
    const spec = machineSpec();
    const vm = spec.vm_id;
    const syscalls = SYSCALLS[process.arch];
    // Stands for the data directory's admin key: a secret the host holds in a private file.
    const hostDir = mkdtempSync(join(tmpdir(), 'arbor-escape-'));
    const adminKey = join(hostDir, 'admin-api-key');
    const secret = randomBytes(32).toString('hex');
    writeFileSync(adminKey, secret, { mode: 0o600 });

    /** Runs argv in the machine; stderr trimmed. */
    const run = async (argv: string[]) => {
      const result = await execCollect(driver, vm, { argv, timeout_secs: 60 });
      return { exit: result.exit_code, out: result.stdout.toString(), err: result.stderr.toString().trim() };
    };
    const sh = (script: string, ...args: string[]) => run(['sh', '-c', script, 'sh', ...args]);
    /** Runs perl code in the machine (perl-base is in every Debian root); `$!` on failure goes to stderr. */
    const perl = (code: string, ...args: string[]) => run(['perl', '-e', code, ...args]);
    /** Opens a file for writing only, writing `value` when it opens; stderr says why it did not. */
    const writeBack = (path: string, value: string) =>
      perl(`sysopen(F, $ARGV[0], ${O_WRONLY}) or die "$!\\n"; defined(syswrite(F, $ARGV[1])) or die "$!\\n"; print "written\\n"`, path, value);

    beforeAll(async () => {
      if (!syscalls) throw new Error(`no system call numbers for ${process.arch}`);
      driver = await open();
      await driver.prepare();
      await driver.create(spec);
    }, 15 * 60_000);

    afterAll(async () => {
      await driver?.destroy(vm);
      rmSync(hostDir, { recursive: true, force: true });
    }, 5 * 60_000);

    it("reads none of the host's files: not the data directory's keys, not /etc/shadow, not through /proc/1/root", async () => {
      expect(readFileSync(adminKey, 'utf8')).toBe(secret);
      for (const path of [adminKey, `/proc/1/root${adminKey}`, hostDir]) {
        const { exit, out, err } = await sh('exec cat -- "$1"', path);
        expect({ path, exit, out }).toEqual({ path, exit: 1, out: '' });
        expect(err).toBe(`cat: ${path}: No such file or directory`);
      }
      const hostShadow = readFileSync('/etc/shadow', 'utf8');
      expect(hostShadow).not.toBe('');
      // The machine's own /etc/shadow (its image's), never the host's.
      const guestShadow = await sh('cat /etc/shadow');
      expect(guestShadow.exit).toBe(0);
      expect(guestShadow.out).not.toBe(hostShadow);
    });

    it('cannot ptrace a host process: it does not exist in the machine', async () => {
      const guestPids = new Set((await stdoutOf(driver, vm, { argv: ['ls', '/proc'] })).split('\n').filter((name) => /^\d+$/.test(name)));
      // This test runner, or, should the machine have a process of that number, another host process it lacks.
      const hostPids = [process.pid, ...readdirSync('/proc').filter((name) => /^\d+$/.test(name)).map(Number)];
      const target = hostPids.find((pid) => pid > 1 && !guestPids.has(String(pid)) && existsSync(`/proc/${pid}`));
      expect(target).toBeDefined();
      const { exit, err } = await perl(`syscall(${syscalls.ptrace}, ${PTRACE_ATTACH}, ${target}, 0, 0) == -1 or die "attached\\n"; die "$!\\n"`);
      expect(exit).not.toBe(0);
      expect(err).toBe('No such process');
    });

    it('keeps reads of a giant file bounded: a sparse 1 TiB file and /dev/zero stop at the cap', async () => {
      await stdoutOf(driver, vm, { argv: ['sh', '-c', 'truncate -s 1T /root/huge && head -c 65536 /dev/zero > /root/exact'] });
      const cap = 65536;
      expect((await driver.readFile(vm, '/root/exact', { max_bytes: cap })).length).toBe(cap);
      for (const [path, max_bytes] of [['/root/exact', cap - 1], ['/root/huge', 8 * 1024 * 1024]] as const) {
        const refused = await driver.readFile(vm, path, { max_bytes }).catch((error: unknown) => error);
        expect(refused).toBeInstanceOf(GuestFileError);
        expect(refused).toMatchObject({ path, reason: 'too_large' });
      }
      // A device is no regular file (refused as such) or, read as one, is cut at the cap.
      const zero = await driver.readFile(vm, '/dev/zero', { max_bytes: cap }).catch((error: unknown) => error);
      expect(zero).toBeInstanceOf(GuestFileError);
      expect(['too_large', 'not_a_file']).toContain((zero as GuestFileError).reason);
    }, 120_000);

    it('ends endless output at the exec timeout', async () => {
      let bytes = 0;
      const { exit_code } = await driver.exec(vm, { argv: ['yes'], timeout_secs: 2 }, (chunk) => (bytes += chunk.data.length));
      expect(exit_code).toBe(124);
      expect(bytes).toBeGreaterThan(0);
    }, 120_000);

    if (!sharedKernel) {
      it('runs a kernel of its own: the kernel log, sysctls and devices it reaches are not the host’s', async () => {
        const hostBoot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
        const guestBoot = (await stdoutOf(driver, vm, { argv: ['cat', '/proc/sys/kernel/random/boot_id'] })).trim();
        expect(guestBoot).toMatch(/^[0-9a-f-]{36}$/);
        expect(guestBoot).not.toBe(hostBoot);
      });
      return;
    }

    it('shares the host kernel, whose sysctls it sees but cannot write: kernel.core_pattern, vm.*', async () => {
      const guestBoot = (await stdoutOf(driver, vm, { argv: ['cat', '/proc/sys/kernel/random/boot_id'] })).trim();
      expect(guestBoot).toBe(readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim());
      for (const sysctl of ['kernel/core_pattern', 'vm/overcommit_memory', 'vm/max_map_count']) {
        const path = `/proc/sys/${sysctl}`;
        const hostValue = readFileSync(path, 'utf8');
        expect(await stdoutOf(driver, vm, { argv: ['cat', path] })).toBe(hostValue);
        const { exit, out, err } = await writeBack(path, hostValue);
        expect({ sysctl, out, refused: exit !== 0 }).toEqual({ sysctl, out: '', refused: true });
        expect(err).toMatch(WRITE_REFUSED);
        expect(readFileSync(path, 'utf8')).toBe(hostValue);
      }
    });

    it('cannot open /proc/sysrq-trigger for writing', async () => {
      const { exit, out, err } = await perl(`sysopen(F, "/proc/sysrq-trigger", ${O_WRONLY}) or die "$!\\n"; print "opened\\n"`);
      expect(out).toBe('');
      expect(exit).not.toBe(0);
      // A kernel without magic SysRq has no such file, on the host either.
      expect(err).toMatch(existsSync('/proc/sysrq-trigger') ? WRITE_REFUSED : /^No such file or directory$/);
    });

    it("cannot read the host kernel's log", async () => {
      expect(execFileSync('dmesg', { encoding: 'utf8' }).length).toBeGreaterThan(0);
      const dmesg = await sh('dmesg');
      expect(dmesg.out).toBe('');
      expect(dmesg.err).toBe('dmesg: read kernel buffer failed: Operation not permitted');
      const kmsg = await sh('head -c 64 /dev/kmsg; head -c 64 /proc/kmsg');
      expect(kmsg.out).toBe('');
      expect(kmsg.err.split('\n')).toEqual([
        "head: cannot open '/dev/kmsg' for reading: No such file or directory",
        "head: cannot open '/proc/kmsg' for reading: Permission denied",
      ]);
    });

    it("cannot make a device node of the host's root disk, nor open any block device", async () => {
      // st_dev of / in the kernel's encoding: major in bits 8–19, minor in bits 0–7 and 20–31.
      const { dev } = statSync('/');
      const [major, minor] = [Math.floor(dev / 256) & 0xfff, (dev & 0xff) | (Math.floor(dev / 4096) & 0xfff00)];
      expect(existsSync(`/sys/dev/block/${major}:${minor}`)).toBe(true); // a real host block device
      const made = await sh('mknod /root/hostdisk b "$1" "$2" && head -c 16 /root/hostdisk | od -c', String(major), String(minor));
      expect(made.out).toBe('');
      expect(made.err).toBe('mknod: /root/hostdisk: Operation not permitted');
      expect(await stdoutOf(driver, vm, { argv: ['find', '/dev', '-type', 'b'] })).toBe('');
    });

    it('cannot mount anything', async () => {
      const { exit, err } = await perl(
        // perl's syscall() passes strings by address: they must be variables, not literals.
        `my @args = ("none", "/mnt", "tmpfs"); syscall(${syscalls.mount}, @args, 0, 0) == -1 or die "mounted\\n"; die "$!\\n"`,
      );
      expect(exit).not.toBe(0);
      expect(err).toBe('Operation not permitted');
    });

    it('cannot leave its cgroup: sees only its own, read-only', async () => {
      const cgroup = (await stdoutOf(driver, vm, { argv: ['cat', '/proc/self/cgroup'] })).trim().split('\n');
      expect(cgroup.length).toBeGreaterThan(0);
      for (const line of cgroup) expect(line).toMatch(/:\/$/);
      const procs = (await stdoutOf(driver, vm, { argv: ['sh', '-c', 'ls /sys/fs/cgroup/cgroup.procs /sys/fs/cgroup/*/cgroup.procs 2>/dev/null; true'] }))
        .split('\n')
        .filter(Boolean);
      expect(procs.length).toBeGreaterThan(0);
      for (const file of procs) {
        const { exit, err } = await writeBack(file, '1');
        expect(exit).not.toBe(0);
        expect(err).toMatch(WRITE_REFUSED);
      }
    });

    it('makes no setuid program for the host: the bit lands on an unprivileged owner on a nosuid mount', async () => {
      const guestPath = `/root/suid-${randomUUID()}`;
      expect(await stdoutOf(driver, vm, { argv: ['sh', '-c', 'cp /bin/sh "$1" && chmod 4755 "$1" && stat -c %a "$1"', 'sh', guestPath] })).toBe('4755\n');
      const hostPath = hooks.hostPathOf!(vm, guestPath);
      const stat = statSync(hostPath);
      expect(stat.mode & 0o4000).toBe(0o4000);
      expect(stat.uid).not.toBe(0);
      const options = execFileSync('findmnt', ['--noheadings', '--output', 'OPTIONS', '--target', hostPath], { encoding: 'utf8' });
      expect(options.trim().split(',')).toEqual(expect.arrayContaining(['nosuid', 'nodev']));
    });
  });
}
