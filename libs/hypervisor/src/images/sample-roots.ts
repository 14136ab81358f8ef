import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { runCommand } from '../host/run-command';
import { ensureDebootstrapped } from '../sandbox/base-rootfs';

/**
 * Root filesystems the image tests and benchmarks build images from: what users bring, with
 * nothing of what Arbor needs in a guest.
 */

/** Debian's busybox-static binary as its package installed it on this host. */
function busyboxStaticBinary(): string {
  const files = execFileSync('dpkg', ['-L', 'busybox-static'], { encoding: 'utf8' }).split('\n');
  const binary = files.find((file) => /\/bin\/busybox$/.test(file));
  if (!binary) throw new Error('busybox-static is not installed (apt-get install busybox-static)');
  return binary;
}

/**
 * A bare busybox-static root: /bin/busybox and one symlink per applet, nothing else (no libc, no
 * /etc, no passwd, no /proc or /dev to mount on).
 */
export function busyboxRoot(dir: string): void {
  mkdirSync(join(dir, 'bin'), { recursive: true });
  const binary = busyboxStaticBinary();
  copyFileSync(binary, join(dir, 'bin/busybox'));
  chmodSync(join(dir, 'bin/busybox'), 0o755);
  const applets = execFileSync(binary, ['--list'], { encoding: 'utf8' }).split('\n').filter(Boolean);
  for (const applet of applets) if (applet !== 'busybox') symlinkSync('busybox', join(dir, 'bin', applet));
}

/** A Debian minbase root (the cached debootstrap output the sandbox's base is made from), copied. */
export async function minbaseRoot(dir: string, cacheDir: string, log: (line: string) => void = () => undefined): Promise<void> {
  const source = await ensureDebootstrapped(cacheDir, log);
  await runCommand('cp', ['-a', '--no-target-directory', source, dir]);
}
