import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzip, tarOf, zstd, type TarEntry } from './tar-archives';

const run = promisify(execFile);

export interface OciLayer {
  entries: TarEntry[];
  compression: 'gzip' | 'zstd' | 'none';
}

const LAYER_TYPES = { gzip: 'application/vnd.oci.image.layer.v1.tar+gzip', zstd: 'application/vnd.oci.image.layer.v1.tar+zstd', none: 'application/vnd.oci.image.layer.v1.tar' };
const sha256 = (bytes: Buffer) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

/**
 * An OCI image layout (https://github.com/opencontainers/image-spec/blob/main/image-layout.md)
 * made by the test, byte by byte: the layers' tars, the config, the linux/amd64 manifest and, with
 * `armDecoy`, an image index that also lists a linux/arm64 image of other files (a client that
 * picks the wrong one shows it). Tagged `tag` in index.json.
 */
export function buildOciLayout(dir: string, tag: string, layers: { tar: Buffer; compression: OciLayer['compression'] }[], options: { armDecoy?: { tar: Buffer } } = {}): void {
  mkdirSync(join(dir, 'blobs', 'sha256'), { recursive: true });
  writeFileSync(join(dir, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  const blob = (bytes: Buffer) => {
    const digest = sha256(bytes);
    writeFileSync(join(dir, 'blobs', 'sha256', digest.slice(7)), bytes);
    return { digest, size: bytes.length };
  };
  const image = (architecture: string, imageLayers: { tar: Buffer; compression: OciLayer['compression'] }[]) => {
    const descriptors = imageLayers.map(({ tar, compression }) => ({
      mediaType: LAYER_TYPES[compression],
      ...blob(compression === 'gzip' ? gzip(tar) : compression === 'zstd' ? zstd(tar) : tar),
    }));
    const config = Buffer.from(
      JSON.stringify({ architecture, os: 'linux', rootfs: { type: 'layers', diff_ids: imageLayers.map(({ tar }) => sha256(tar)) }, config: { Env: ['PATH=/bin:/usr/bin'] } }),
    );
    const manifest = Buffer.from(
      JSON.stringify({ schemaVersion: 2, mediaType: 'application/vnd.oci.image.manifest.v1+json', config: { mediaType: 'application/vnd.oci.image.config.v1+json', ...blob(config) }, layers: descriptors }),
    );
    return { mediaType: 'application/vnd.oci.image.manifest.v1+json', ...blob(manifest), platform: { os: 'linux', architecture } };
  };
  const amd64 = image('amd64', layers);
  let top: object = amd64;
  if (options.armDecoy) {
    const arm64 = image('arm64', [{ tar: options.armDecoy.tar, compression: 'gzip' }]);
    const index = Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: 'application/vnd.oci.image.index.v1+json', manifests: [arm64, amd64] }));
    top = { mediaType: 'application/vnd.oci.image.index.v1+json', ...blob(index) };
  }
  writeFileSync(join(dir, 'index.json'), JSON.stringify({ schemaVersion: 2, manifests: [{ ...top, annotations: { 'org.opencontainers.image.ref.name': tag } }] }));
}

/** Pushes an OCI layout's tag into a registry over plain HTTP with skopeo (every platform of an index). */
export async function pushWithSkopeo(layout: string, tag: string, destination: string, credentials: string | null = null): Promise<void> {
  await run('skopeo', [
    'copy',
    '--all',
    '--quiet',
    '--insecure-policy',
    '--dest-tls-verify=false',
    ...(credentials ? ['--dest-creds', credentials] : []),
    `oci:${layout}:${tag}`,
    `docker://${destination}`,
  ]);
}

/**
 * The test image, two layers over a busybox-static root: the first (gzip) has the root, a file and a
 * directory with two files; the second (zstd) removes the file (a whiteout), makes the directory
 * opaque with a new file in it, and adds /hello.txt. Expected: `/etc/removed` and `/opt/data/old-*`
 * gone, `/opt/data/new` and `/hello.txt` there.
 */
export async function testImageLayers(busyboxRoot: TarEntry[]): Promise<{ tar: Buffer; compression: OciLayer['compression'] }[]> {
  const lower = await tarOf([
    ...busyboxRoot,
    { name: 'etc/removed', content: 'deleted in the upper layer\n' },
    { name: 'opt/data/old-1', content: 'hidden by the opaque directory\n' },
    { name: 'opt/data/old-2', content: 'hidden by the opaque directory\n' },
  ]);
  const upper = await tarOf([
    { name: 'etc/.wh.removed' },
    { name: 'opt/data/', type: 'directory' },
    { name: 'opt/data/.wh..wh..opq' },
    { name: 'opt/data/new', content: 'from the upper layer\n' },
    { name: 'hello.txt', content: 'hello from the registry image\n' },
  ]);
  return [
    { tar: lower, compression: 'gzip' },
    { tar: upper, compression: 'zstd' },
  ];
}

/** The entries of a busybox-static root: /bin/busybox and its `sh` and a few applets, /etc/passwd. */
export function busyboxRootEntries(): TarEntry[] {
  const busybox = readFileSync('/bin/busybox');
  return [
    { name: 'bin/', type: 'directory' },
    { name: 'bin/busybox', content: busybox, mode: 0o755 },
    ...['sh', 'ls', 'cat', 'echo', 'env', 'pwd', 'sleep', 'true', 'false', 'test'].map((applet): TarEntry => ({ name: `bin/${applet}`, type: 'symlink', linkname: 'busybox' })),
    { name: 'etc/passwd', content: 'root:x:0:0:root:/root:/bin/sh\n' },
    { name: 'tmp/', type: 'directory', mode: 0o1777 },
    { name: 'root/', type: 'directory', mode: 0o700 },
  ];
}

/** Builds the test image's layout in a temporary directory and pushes it as `<registry>/<repository>:<tag>`. */
export async function pushTestImage(registryHost: string, repository: string, tag: string, credentials: string | null = null): Promise<void> {
  const layout = mkdtempSync(join(tmpdir(), 'arbor-oci-'));
  try {
    const decoy = await tarOf([{ name: 'wrong-platform', content: 'arm64\n' }]);
    buildOciLayout(layout, tag, await testImageLayers(busyboxRootEntries()), { armDecoy: { tar: decoy } });
    await pushWithSkopeo(layout, tag, `${registryHost}/${repository}:${tag}`, credentials);
  } finally {
    rmSync(layout, { recursive: true, force: true });
  }
}
