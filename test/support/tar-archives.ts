import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { pack, type Header } from 'tar-stream';

/** One entry of a test archive: a header (name, type, mode, ids, link target) and a file's content. */
export interface TarEntry extends Partial<Header> {
  name: string;
  content?: string | Buffer;
}

/** A tar archive of exactly these entries, in this order (tar-stream writes what it is given, `../` and all). */
export async function tarOf(entries: TarEntry[]): Promise<Buffer> {
  const archive = pack();
  const chunks: Buffer[] = [];
  archive.on('data', (chunk) => chunks.push(chunk as Buffer));
  const ended = new Promise<void>((resolve, reject) => {
    archive.on('end', resolve);
    archive.on('error', reject);
  });
  for (const { content, ...header } of entries) {
    // A file without content is an empty one (tar-stream waits for a file entry's body).
    const isFile = header.type === undefined || header.type === 'file' || header.type === 'contiguous-file';
    const body = content === undefined ? (isFile ? Buffer.alloc(0) : undefined) : Buffer.from(content);
    const defaults: Partial<Header> = { type: 'file', mode: header.type === 'directory' ? 0o755 : 0o644, uid: 0, gid: 0, mtime: new Date('2026-01-01T00:00:00Z') };
    await new Promise<void>((resolve, reject) => {
      const done = (error?: Error | null) => (error ? reject(error) : resolve());
      if (body !== undefined) archive.entry({ ...defaults, ...header, size: body.length }, body, done);
      else archive.entry({ ...defaults, ...header }, done);
    });
  }
  archive.finalize();
  await ended;
  return Buffer.concat(chunks);
}

export const gzip = (tar: Buffer): Buffer => gzipSync(tar);

/** zstd-compressed with Debian's zstd. */
export function zstd(tar: Buffer): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'arbor-zstd-'));
  try {
    writeFileSync(join(dir, 'in'), tar);
    execFileSync('zstd', ['-q', '-3', join(dir, 'in'), '-o', join(dir, 'out')]);
    return readFileSync(join(dir, 'out'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A tar of a tiny root filesystem of Debian's busybox-static: `/bin/busybox` and a link per
 * applet in /bin, /etc with a passwd and group, empty /tmp (1777), /root, /proc, /sys, /dev. No
 * bash, perl or glibc: what a bare image is.
 */
export function busyboxRootTar(file: string, extraFiles: Record<string, string> = {}): void {
  const root = mkdtempSync(join(tmpdir(), 'arbor-busybox-root-'));
  try {
    const sh = (script: string) => execFileSync('sh', ['-ec', script], { cwd: root });
    sh('mkdir -p bin etc tmp root proc sys dev usr/bin sbin && chmod 1777 tmp && chmod 700 root && cp /bin/busybox bin/busybox');
    sh('for applet in $(bin/busybox --list); do [ "$applet" = busybox ] || ln -s busybox "bin/$applet"; done');
    writeFileSync(join(root, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n');
    writeFileSync(join(root, 'etc/group'), 'root:x:0:\nnogroup:x:65534:\n');
    for (const [path, content] of Object.entries(extraFiles)) {
      execFileSync('mkdir', ['-p', join(root, path, '..')]);
      writeFileSync(join(root, path), content);
    }
    execFileSync('tar', ['--numeric-owner', '-C', root, '-cf', file, '.']);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** Where the sandbox driver keeps its Debian minbase root filesystem (made by `npm run prepare-images`). */
export const MINBASE_ROOTFS = '/var/cache/arbor/sandbox/rootfs-bookworm-minbase-v2';
