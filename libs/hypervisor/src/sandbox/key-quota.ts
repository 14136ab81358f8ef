import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Where the kernel's per-user key quotas are set. */
export const KEY_QUOTA_DIR = '/proc/sys/kernel/keys';

/**
 * Room the sandbox needs in the kernel's key quotas of one user. Every machine's init joins a new
 * session keyring (runc makes one per container, so a machine never shares the host's), owned by
 * the host uid guest root maps to, which every machine on the host shares; the kernel lets a
 * non-root user hold `maxkeys` keys (200 by default) of `maxbytes` bytes (20,000): past about 200
 * machines runc fails with "unable to create session key: disk quota exceeded". A keyring costs
 * about 42 bytes: this is room for 10,000 machines.
 */
export const MACHINE_KEY_QUOTA = { maxkeys: 20_000, maxbytes: 1_000_000 } as const;

/** Raises the quotas to MACHINE_KEY_QUOTA where they are lower (never lowers one); returns what it changed, for the log. */
export async function ensureKeyQuota(dir = KEY_QUOTA_DIR): Promise<string[]> {
  const changed: string[] = [];
  for (const [name, wanted] of Object.entries(MACHINE_KEY_QUOTA)) {
    const file = join(dir, name);
    const current = Number((await readFile(file, 'utf8')).trim());
    if (current >= wanted) continue;
    await writeFile(file, String(wanted));
    changed.push(`kernel.keys.${name} ${current} → ${wanted}`);
  }
  return changed;
}
