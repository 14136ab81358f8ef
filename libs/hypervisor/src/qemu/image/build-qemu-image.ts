import { ensureQemuBaseImage } from './qemu-base-image';

/**
 * Command line entry (scripts/build-qemu-image.sh): builds the QEMU base image into
 * `$ARBOR_CACHE_DIR/qemu/` (default /var/cache/arbor) with progress on stdout.
 */
async function main() {
  const cacheDir = process.env.ARBOR_CACHE_DIR || '/var/cache/arbor';
  const image = await ensureQemuBaseImage(cacheDir, (line) => console.log(line));
  console.log(`qemu image: ${image.dir} (kernel ${image.kernel_release}, disk ${image.disk_size_mib} MiB)`);
}

main().catch((error) => {
  console.error(`qemu image: failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
