/**
 * An archive the extractor refuses: an entry that would land outside the root filesystem, a link
 * out of it, more than the caps allow, a compression it cannot read. The message says which
 * entry and why (it becomes the image job's error_message).
 */
export class UnsafeArchiveError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnsafeArchiveError';
  }
}

/** More than a cap allows (bytes written, entries, archive bytes). */
export class ArchiveTooLargeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ArchiveTooLargeError';
  }
}
