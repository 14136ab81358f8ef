const MIB = 1024 * 1024;

/**
 * The disk size (MiB) a machine of an image gets, the same on every driver: what the root
 * filesystem's entries take on disk (du's count, so a sparse file costs its data, not its length)
 * with a quarter more room (ext4's inodes and metadata on qemu, first writes on either), at
 * least 64 MiB over them, in 64 MiB steps, plus the free space the image asked for.
 */
export function imageSizeMib(rootfsBytes: number, extraMib: number): number {
  if (!Number.isInteger(extraMib) || extraMib < 0) throw new Error(`extra_size_mib must be a whole number of MiB ≥ 0 (got ${extraMib})`);
  return Math.ceil(((rootfsBytes / MIB) * 1.25 + 64) / 64) * 64 + extraMib;
}
