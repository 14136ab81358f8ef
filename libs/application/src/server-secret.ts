import { randomBytes } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '@arbor/durable-files';

/** Where a server secret comes from: an environment variable (hex), else a file in the data directory. */
export interface ServerSecretSource {
  env: string;
  file: string;
}

/**
 * A secret of this installation from which per-resource secrets are derived (HMAC-SHA256 of it
 * and the resource's id), so none of those is ever stored: `source.env` (hex, at least 32
 * bytes), or else `<dataDir>/<source.file>`, created with 32 random bytes on first use. Processes
 * that derive the same secrets (api replicas, the api and the webhook deliverer) need the same
 * one: the same environment variable, or the same data directory.
 */
export async function loadServerSecret(dataDir: string, source: ServerSecretSource, env: NodeJS.ProcessEnv = process.env): Promise<Buffer> {
  const fromEnv = env[source.env];
  return fromEnv ? parseSecret(fromEnv, source.env) : loadOrCreateSecretFile(join(dataDir, source.file), dataDir);
}

function parseSecret(hex: string, where: string): Buffer {
  const value = hex.trim();
  if (!/^([0-9a-fA-F]{2}){32,}$/.test(value)) throw new Error(`${where} must be at least 32 bytes as hex (64+ hex digits)`);
  return Buffer.from(value, 'hex');
}

/**
 * Created whole, only if absent (see writeFileAtomic): two processes starting at once end up with
 * the same secret, and none ever reads a partial one.
 */
async function loadOrCreateSecretFile(file: string, dataDir: string): Promise<Buffer> {
  await mkdir(dataDir, { recursive: true });
  await writeFileAtomic(file, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, ifAbsent: true });
  return parseSecret(await readFile(file, 'utf8'), file);
}
