/** Plaintext kept at most, in characters: a few files' worth. */
const DEFAULT_MAX_CHARS = 32 * 1024 * 1024;

/**
 * Sealed values this process opened lately (in the form an event in clear holds them), by event id
 * and field, least recently used dropped first. An aggregate is read again for every command on it (a file upload appends up to 16
 * chunks, each handle reading the ones before), so without it a stream's secrets would be
 * decrypted over and over. EventSecrets asks the key store for each value's key before it looks
 * here, so a shredded key stops opening cached values too.
 */
export class OpenedValues {
  private readonly values = new Map<string, string>();
  private chars = 0;

  constructor(private readonly maxChars = DEFAULT_MAX_CHARS) {}

  get(id: string): string | undefined {
    const value = this.values.get(id);
    if (value) {
      this.values.delete(id);
      this.values.set(id, value); // most recently used last
    }
    return value;
  }

  set(id: string, value: string): void {
    if (value.length > this.maxChars || this.values.has(id)) return;
    this.values.set(id, value);
    this.chars += value.length;
    for (const [oldest, dropped] of this.values) {
      if (this.chars <= this.maxChars) break;
      this.values.delete(oldest);
      this.chars -= dropped.length;
    }
  }
}
