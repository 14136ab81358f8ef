import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, copyFile, lstat, mkdir, readlink, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, posix } from 'node:path';
import { withHostLock } from '../host/host-lock';
import { unmountAllUnder } from '../host/host-mounts';
import { runCommand, runStreamingLines } from '../host/run-command';
import { compileGuestHelper, guestHelperSource } from './guest-helper-build';
import { KIT_INIT, SSHD_CONFIG, SSHD_START, SSHD_START_PATH } from './kit-files';
import { KIT_MOUNT, KIT_PATHS } from './kit-paths';

const SUITE = 'bookworm';
const MIRROR = 'http://deb.debian.org/debian';
/** The Debian packages the kit's programs come from (installed into a scratch root, then picked). */
const PACKAGES = ['openssh-server', 'qemu-guest-agent', 'e2fsprogs', 'iproute2', 'busybox-static'];
/** Bump when PACKAGES or the picking changes: a new name is a fresh debootstrap beside the old one. */
const DEBIAN_PART = 'debian-bookworm-v1';

/** Dynamically linked programs: where they are in the Debian root, where they go in the kit. */
const PROGRAMS: [from: string, to: string][] = [
  ['/usr/sbin/sshd', KIT_PATHS.sshd],
  ['/usr/sbin/qemu-ga', KIT_PATHS.qemuGa],
  ['/sbin/resize2fs', KIT_PATHS.resize2fs],
  ['/bin/ip', KIT_PATHS.ip],
];
/** Loaded at run time rather than linked (glibc dlopens it for thread cancellation). */
const ALSO_LIBRARIES = ['/lib/x86_64-linux-gnu/libgcc_s.so.1'];
const LOADER = '/lib64/ld-linux-x86-64.so.2';

export interface GuestKit {
  dir: string;
  /** The tree machines see at /.arbor (owned by host root; each driver brings it in its own way). */
  tree: string;
  /** The static helper, which the host also runs (prepare-tree on image root filesystems). */
  helper: string;
}

/**
 * The kit's name: its Debian part and a digest of everything Arbor writes into it (the helper's
 * source, the init, the SSH server's settings), so any change is a fresh kit beside the old one,
 * which machines and snapshots made with it keep using.
 */
export const GUEST_KIT_NAME = `guest-kit-${createHash('sha256')
  .update(JSON.stringify([DEBIAN_PART, readFileSync(guestHelperSource(), 'utf8'), KIT_INIT, SSHD_START, SSHD_CONFIG]))
  .digest('hex')
  .slice(0, 16)}`;

export function guestKitDir(cacheDir: string): string {
  return join(cacheDir, 'kit', GUEST_KIT_NAME);
}

function kitOf(dir: string): GuestKit {
  const tree = join(dir, 'tree');
  return { dir, tree, helper: join(tree, KIT_PATHS.helper.slice(KIT_MOUNT.length + 1)) };
}

/** The built kit, or null when this host has not built it yet. */
export function readGuestKit(cacheDir: string): GuestKit | null {
  const dir = guestKitDir(cacheDir);
  return existsSync(join(dir, 'kit.json')) ? kitOf(dir) : null;
}

/**
 * Arbor's guest kit, built once per host into the cache: what every machine runs from /.arbor,
 * whatever its image holds. The static helper (arbor-guest.c, gcc -static) and busybox-static
 * need nothing of the image; Debian's sshd, qemu-ga, resize2fs and ip come with their shared
 * libraries and glibc's loader under /.arbor/lib, patched (patchelf) to name that loader as their
 * interpreter and that directory as their library path, so they run in an Alpine (musl) or
 * distroless root exactly as in Debian. The build checks that each one starts in a root holding
 * nothing but the kit. Built in a scratch directory renamed into place, under a host-wide lock.
 */
export async function ensureGuestKit(cacheDir: string, log: (line: string) => void): Promise<GuestKit> {
  const built = readGuestKit(cacheDir);
  if (built) return built;
  const debian = await ensureDebianPart(cacheDir, log);
  const target = guestKitDir(cacheDir);
  await withHostLock(`${target}.lock`, async () => {
    if (existsSync(join(target, 'kit.json'))) return;
    const scratch = `${target}.partial`;
    await rm(scratch, { recursive: true, force: true });
    await mkdir(scratch, { recursive: true });
    const kit = kitOf(scratch);
    await runCommand('cp', ['-a', debian, kit.tree]);
    await writeArborFiles(kit.tree);
    await compileGuestHelper(kit.helper);
    await checkInEmptyRoot(kit.tree, join(scratch, 'check'));
    await writeFile(join(scratch, 'kit.json'), `${JSON.stringify({ name: GUEST_KIT_NAME, debian: DEBIAN_PART, built_at: new Date().toISOString() }, null, 2)}\n`);
    await rename(scratch, target);
    log(`guest kit: ${GUEST_KIT_NAME} ready at ${target}`);
  });
  return kitOf(target);
}

/**
 * The kit's Debian programs with their libraries and loader, and busybox-static: picked once per
 * host from a scratch debootstrap (the slow part, a minute or two), kept under the cache.
 */
async function ensureDebianPart(cacheDir: string, log: (line: string) => void): Promise<string> {
  const target = join(cacheDir, 'kit', DEBIAN_PART);
  if (existsSync(target)) return target;
  await mkdir(dirname(target), { recursive: true });
  await withHostLock(`${target}.lock`, async () => {
    if (existsSync(target)) return;
    const scratch = `${target}.partial`;
    await unmountAllUnder(scratch); // debootstrap of a crashed build may have left /proc mounted
    await rm(scratch, { recursive: true, force: true });
    await mkdir(scratch, { recursive: true });
    const started = Date.now();
    const root = join(scratch, 'debian');
    log(`guest kit: debootstrap --variant=minbase --include=${PACKAGES.join(',')} ${SUITE} for the kit's programs (once per host)`);
    await runStreamingLines('debootstrap', ['--variant=minbase', `--include=${PACKAGES.join(',')}`, SUITE, root, MIRROR], (line) =>
      log(`debootstrap: ${line}`),
    );
    const tree = join(scratch, 'tree');
    await pickPrograms(root, tree);
    await unmountAllUnder(root);
    await rm(root, { recursive: true, force: true });
    await rename(tree, target);
    await rm(scratch, { recursive: true, force: true });
    log(`guest kit: ${DEBIAN_PART} programs ready in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  });
  return target;
}

/** Where a kit path (/.arbor/…) is in a kit tree on the host. */
function inTree(tree: string, guestPath: string): string {
  return join(tree, guestPath.slice(KIT_MOUNT.length + 1));
}

/** Programs, their libraries and loader, and busybox from a bootstrapped Debian root, into `tree`. */
async function pickPrograms(root: string, tree: string): Promise<void> {
  for (const dir of ['bin', 'sbin', 'lib']) await mkdir(join(tree, dir), { recursive: true });
  const libraries = new Set<string>();
  for (const [from, to] of PROGRAMS) {
    await copyFile(await resolveInside(root, from), inTree(tree, to));
    for (const library of await sharedLibrariesOf(root, from)) libraries.add(library);
  }
  for (const library of ALSO_LIBRARIES) if (existsSync(await resolveInside(root, library))) libraries.add(library);
  for (const library of libraries) await copyFile(await resolveInside(root, library), join(inTree(tree, KIT_PATHS.libDir), posix.basename(library)));
  await copyFile(await resolveInside(root, LOADER), inTree(tree, KIT_PATHS.loader));
  for (const [, to] of PROGRAMS) {
    await runCommand('patchelf', ['--set-interpreter', KIT_PATHS.loader, '--force-rpath', '--set-rpath', KIT_PATHS.libDir, inTree(tree, to)]);
  }
  const busybox = await resolveInside(root, '/bin/busybox');
  const interpreter = await runCommand('patchelf', ['--print-interpreter', busybox]).catch(() => '');
  if (interpreter.trim()) throw new Error(`busybox from busybox-static is dynamically linked (${interpreter.trim()})`);
  await copyFile(busybox, inTree(tree, KIT_PATHS.busybox));
  await runCommand('chown', ['-R', '0:0', tree]);
  await runCommand('chmod', ['-R', 'u=rwX,go=rX', tree]);
  for (const program of [...PROGRAMS.map(([, to]) => to), KIT_PATHS.busybox, KIT_PATHS.loader]) await chmod(inTree(tree, program), 0o755);
}

/** Arbor's own files: the init, the SSH server's start and settings (kit-files.ts). */
async function writeArborFiles(tree: string): Promise<void> {
  for (const dir of ['libexec', 'etc']) await mkdir(join(tree, dir), { recursive: true, mode: 0o755 });
  await writeFile(inTree(tree, KIT_PATHS.init), KIT_INIT, { mode: 0o755 });
  await writeFile(inTree(tree, SSHD_START_PATH), SSHD_START, { mode: 0o755 });
  await writeFile(inTree(tree, KIT_PATHS.sshdConfig), SSHD_CONFIG, { mode: 0o644 });
}

/** The shared libraries a program of the root loads, as the root's own loader resolves them. */
async function sharedLibrariesOf(root: string, program: string): Promise<string[]> {
  const listing = await runCommand('chroot', [root, LOADER, '--list', program]);
  const libraries: string[] = [];
  for (const line of listing.split('\n')) {
    const found = /=>\s+(\/\S+)/.exec(line);
    if (found) libraries.push(found[1]);
    else if (/not found/.test(line)) throw new Error(`${program} in the kit's Debian root: ${line.trim()}`);
  }
  return libraries;
}

/**
 * A path of the Debian root as the root sees it (its symlinks, absolute ones included, resolved
 * inside it), as a host path. The root is the kit build's own debootstrap output.
 */
async function resolveInside(root: string, guestPath: string, hops = 0): Promise<string> {
  if (hops > 40) throw new Error(`too many symlinks resolving ${guestPath} in ${root}`);
  const parts = posix.normalize(`/${guestPath}`).split('/').filter(Boolean);
  let current = '/';
  for (let index = 0; index < parts.length; index++) {
    const next = posix.join(current, parts[index]);
    const stat = await lstat(join(root, next));
    if (stat.isSymbolicLink()) {
      const target = await readlink(join(root, next));
      const base = target.startsWith('/') ? target : posix.join(current, target);
      return resolveInside(root, posix.join(base, ...parts.slice(index + 1)), hops + 1);
    }
    current = next;
  }
  return join(root, current);
}

/**
 * Runs each kit program in a root holding nothing but the kit (no libc, no shell): what an image
 * without them gives it. A kit that would not start there is not published.
 */
async function checkInEmptyRoot(tree: string, check: string): Promise<void> {
  await mkdir(check, { recursive: true });
  await runCommand('cp', ['-a', tree, join(check, KIT_MOUNT.slice(1))]);
  const run = (argv: string[]) => runCommand('chroot', [check, ...argv]).catch((error: Error) => {
    throw new Error(`guest kit check: ${argv.join(' ')} does not run in an empty root: ${error.message}`);
  });
  await run([KIT_PATHS.sshd, '-V']).catch(async () => {
    // sshd -V prints its version on stderr and exits 0 on 9.x; older ones exit 1: ask the loader instead.
    await run([KIT_PATHS.loader, '--list', KIT_PATHS.sshd]);
  });
  await run([KIT_PATHS.qemuGa, '--version']);
  await run([KIT_PATHS.ip, '-V']);
  await run([KIT_PATHS.loader, '--list', KIT_PATHS.resize2fs]);
  await run([KIT_PATHS.busybox, 'true']);
  const exec = await run([KIT_PATHS.helper, 'exec', '--', KIT_PATHS.busybox, 'echo', 'kit']);
  if (!exec.includes('kit')) throw new Error(`guest kit check: the helper's exec said ${JSON.stringify(exec)}`);
  await rm(check, { recursive: true, force: true });
}
