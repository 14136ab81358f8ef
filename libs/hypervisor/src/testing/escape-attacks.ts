import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';

/** What one command run in the machine gave: its exit code, stdout, and stderr trimmed. */
export interface GuestRun {
  exit: number;
  out: string;
  err: string;
}

/**
 * A machine to attack from inside, however commands reach it (the driver's exec, or the API's
 * `POST /vm/{id}/exec`), and what the host side of the attack needs.
 */
export interface EscapeTarget {
  /** Runs argv in the machine. */
  run(argv: string[]): Promise<GuestRun>;
  /** A private host file standing for the data directory's admin key, in a directory of its own. */
  hostSecret: { dir: string; path: string; value: string };
  /** The host file that holds a guest file of the machine's writable layer (shared-kernel drivers). */
  hostPathOf?: (guestPath: string) => string;
}

/**
 * 'shared-kernel': machines are confined processes of the host's own kernel (containers), so
 * every host-kernel attack is tried. 'hardware': a virtual machine with a kernel of its own, whose
 * kernel log, sysctls and devices are its own; there only the host's files and processes are tried.
 */
export type EscapeBoundary = 'shared-kernel' | 'hardware';

/** One attack on the host from inside a machine, in a harmless form; it throws if the attack got through. */
export interface EscapeAttack {
  name: string;
  boundaries: EscapeBoundary[];
  attempt(target: EscapeTarget): Promise<void>;
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

function syscalls(): { ptrace: number; mount: number } {
  const numbers = SYSCALLS[process.arch];
  if (!numbers) throw new Error(`no system call numbers for ${process.arch}`);
  return numbers;
}

const sh = (target: EscapeTarget, script: string, ...args: string[]) => target.run(['sh', '-c', script, 'sh', ...args]);
/** Runs perl code in the machine (perl-base is in every Debian root); `$!` on failure goes to stderr. */
const perl = (target: EscapeTarget, code: string, ...args: string[]) => target.run(['perl', '-e', code, ...args]);
/** Opens a file for writing only, writing `value` when it opens; stderr says why it did not. */
const writeBack = (target: EscapeTarget, path: string, value: string) =>
  perl(target, `sysopen(F, $ARGV[0], ${O_WRONLY}) or die "$!\\n"; defined(syswrite(F, $ARGV[1])) or die "$!\\n"; print "written\\n"`, path, value);

/** stdout of a command that must succeed. */
async function stdoutOf(target: EscapeTarget, argv: string[]): Promise<string> {
  const { exit, out, err } = await target.run(argv);
  if (exit !== 0) throw new Error(`${argv.join(' ')} exited ${exit}: ${err}`);
  return out;
}

/**
 * Each attack of issue 13 that a command in the machine can make, asserting the exact failure
 * and, where it could pass by accident, first that the target is real (the sysctl shows the host's
 * value, the host can read its kernel log, the setuid bit is really set). The driver contract runs
 * them through the driver, the trust suite through the API.
 */
export const ESCAPE_ATTACKS: EscapeAttack[] = [
  {
    name: "reads none of the host's files: not the data directory's keys, not /etc/shadow, not through /proc/1/root",
    boundaries: ['shared-kernel', 'hardware'],
    async attempt(target) {
      const { dir, path: secretPath, value } = target.hostSecret;
      expect(readFileSync(secretPath, 'utf8')).toBe(value);
      for (const path of [secretPath, `/proc/1/root${secretPath}`, dir]) {
        const { exit, out, err } = await sh(target, 'exec cat -- "$1"', path);
        expect({ path, exit, out }).toEqual({ path, exit: 1, out: '' });
        expect(err).toBe(`cat: ${path}: No such file or directory`);
      }
      const hostShadow = readFileSync('/etc/shadow', 'utf8');
      expect(hostShadow).not.toBe('');
      // The machine's own /etc/shadow (its image's), never the host's.
      const guestShadow = await sh(target, 'cat /etc/shadow');
      expect(guestShadow.exit).toBe(0);
      expect(guestShadow.out).not.toBe(hostShadow);
    },
  },
  {
    name: 'cannot ptrace a host process: it does not exist in the machine',
    boundaries: ['shared-kernel', 'hardware'],
    async attempt(target) {
      const guestPids = new Set((await stdoutOf(target, ['ls', '/proc'])).split('\n').filter((name) => /^\d+$/.test(name)));
      // This process, or, should the machine have a process of that number, another host process it lacks.
      const hostPids = [process.pid, ...readdirSync('/proc').filter((name) => /^\d+$/.test(name)).map(Number)];
      const victim = hostPids.find((pid) => pid > 1 && !guestPids.has(String(pid)) && existsSync(`/proc/${pid}`));
      expect(victim).toBeDefined();
      const { exit, err } = await perl(target, `syscall(${syscalls().ptrace}, ${PTRACE_ATTACH}, ${victim}, 0, 0) == -1 or die "attached\\n"; die "$!\\n"`);
      expect(exit).not.toBe(0);
      expect(err).toBe('No such process');
    },
  },
  {
    name: 'runs a kernel of its own: the kernel log, sysctls and devices it reaches are not the host’s',
    boundaries: ['hardware'],
    async attempt(target) {
      const hostBoot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
      const guestBoot = (await stdoutOf(target, ['cat', '/proc/sys/kernel/random/boot_id'])).trim();
      expect(guestBoot).toMatch(/^[0-9a-f-]{36}$/);
      expect(guestBoot).not.toBe(hostBoot);
    },
  },
  {
    name: 'shares the host kernel, whose sysctls it sees but cannot write: kernel.core_pattern, vm.*',
    boundaries: ['shared-kernel'],
    async attempt(target) {
      const guestBoot = (await stdoutOf(target, ['cat', '/proc/sys/kernel/random/boot_id'])).trim();
      expect(guestBoot).toBe(readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim());
      for (const sysctl of ['kernel/core_pattern', 'vm/overcommit_memory', 'vm/max_map_count']) {
        const path = `/proc/sys/${sysctl}`;
        const hostValue = readFileSync(path, 'utf8');
        expect(await stdoutOf(target, ['cat', path])).toBe(hostValue);
        const { exit, out, err } = await writeBack(target, path, hostValue);
        expect({ sysctl, out, refused: exit !== 0 }).toEqual({ sysctl, out: '', refused: true });
        expect(err).toMatch(WRITE_REFUSED);
        expect(readFileSync(path, 'utf8')).toBe(hostValue);
      }
    },
  },
  {
    name: 'cannot open /proc/sysrq-trigger for writing',
    boundaries: ['shared-kernel'],
    async attempt(target) {
      const { exit, out, err } = await perl(target, `sysopen(F, "/proc/sysrq-trigger", ${O_WRONLY}) or die "$!\\n"; print "opened\\n"`);
      expect(out).toBe('');
      expect(exit).not.toBe(0);
      // A kernel without magic SysRq has no such file, on the host either.
      expect(err).toMatch(existsSync('/proc/sysrq-trigger') ? WRITE_REFUSED : /^No such file or directory$/);
    },
  },
  {
    name: "cannot read the host kernel's log",
    boundaries: ['shared-kernel'],
    async attempt(target) {
      expect(execFileSync('dmesg', { encoding: 'utf8' }).length).toBeGreaterThan(0);
      const dmesg = await sh(target, 'dmesg');
      expect(dmesg.out).toBe('');
      expect(dmesg.err).toBe('dmesg: read kernel buffer failed: Operation not permitted');
      const kmsg = await sh(target, 'head -c 64 /dev/kmsg; head -c 64 /proc/kmsg');
      expect(kmsg.out).toBe('');
      expect(kmsg.err.split('\n')).toEqual([
        "head: cannot open '/dev/kmsg' for reading: No such file or directory",
        "head: cannot open '/proc/kmsg' for reading: Permission denied",
      ]);
    },
  },
  {
    name: "cannot make a device node of the host's root disk, nor open any block device",
    boundaries: ['shared-kernel'],
    async attempt(target) {
      // st_dev of / in the kernel's encoding: major in bits 8–19, minor in bits 0–7 and 20–31.
      const { dev } = statSync('/');
      const [major, minor] = [Math.floor(dev / 256) & 0xfff, (dev & 0xff) | (Math.floor(dev / 4096) & 0xfff00)];
      expect(existsSync(`/sys/dev/block/${major}:${minor}`)).toBe(true); // a real host block device
      const made = await sh(target, 'mknod /root/hostdisk b "$1" "$2" && head -c 16 /root/hostdisk | od -c', String(major), String(minor));
      expect(made.out).toBe('');
      expect(made.err).toBe('mknod: /root/hostdisk: Operation not permitted');
      expect(await stdoutOf(target, ['find', '/dev', '-type', 'b'])).toBe('');
    },
  },
  {
    name: 'cannot mount anything',
    boundaries: ['shared-kernel'],
    async attempt(target) {
      const { exit, err } = await perl(
        target,
        // perl's syscall() passes strings by address: they must be variables, not literals.
        `my @args = ("none", "/mnt", "tmpfs"); syscall(${syscalls().mount}, @args, 0, 0) == -1 or die "mounted\\n"; die "$!\\n"`,
      );
      expect(exit).not.toBe(0);
      expect(err).toBe('Operation not permitted');
    },
  },
  {
    name: 'cannot leave its cgroup: sees only its own, read-only',
    boundaries: ['shared-kernel'],
    async attempt(target) {
      const cgroup = (await stdoutOf(target, ['cat', '/proc/self/cgroup'])).trim().split('\n');
      expect(cgroup.length).toBeGreaterThan(0);
      for (const line of cgroup) expect(line).toMatch(/:\/$/);
      const procs = (await stdoutOf(target, ['sh', '-c', 'ls /sys/fs/cgroup/cgroup.procs /sys/fs/cgroup/*/cgroup.procs 2>/dev/null; true'])).split('\n').filter(Boolean);
      expect(procs.length).toBeGreaterThan(0);
      for (const file of procs) {
        const { exit, err } = await writeBack(target, file, '1');
        expect(exit).not.toBe(0);
        expect(err).toMatch(WRITE_REFUSED);
      }
    },
  },
  {
    name: 'makes no setuid program for the host: the bit lands on an unprivileged owner on a nosuid mount',
    boundaries: ['shared-kernel'],
    async attempt(target) {
      const guestPath = `/root/suid-${randomUUID()}`;
      expect(await stdoutOf(target, ['sh', '-c', 'cp /bin/sh "$1" && chmod 4755 "$1" && stat -c %a "$1"', 'sh', guestPath])).toBe('4755\n');
      const hostPath = target.hostPathOf!(guestPath);
      const stat = statSync(hostPath);
      expect(stat.mode & 0o4000).toBe(0o4000);
      expect(stat.uid).not.toBe(0);
      const options = execFileSync('findmnt', ['--noheadings', '--output', 'OPTIONS', '--target', hostPath], { encoding: 'utf8' });
      expect(options.trim().split(',')).toEqual(expect.arrayContaining(['nosuid', 'nodev']));
    },
  },
];
