import { randomBytes } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '@arbor/durable-files';

/**
 * Where a server secret comes from: an environment variable (hex), else a file named by
 * `<env>_FILE` (hex; the Docker secrets convention), else a file in the data directory.
 */
export interface ServerSecretSource {
  env: string;
  file: string;
}

/**
 * A secret of this installation from which per-resource secrets are derived (HMAC-SHA256 of it
 * and the resource's id), so none of those is ever stored: `source.env` (hex, at least 32
 * bytes), or the file `source.env`_FILE names, or else `<dataDir>/<source.file>`, created with 32
 * random bytes on first use. Processes that derive the same secrets (api replicas, the api and the
 * webhook deliverer) need the same one: the same environment variable, or the same data directory.
 */
export async function loadServerSecret(dataDir: string, source: ServerSecretSource, env: NodeJS.ProcessEnv = process.env): Promise<Buffer> {
  return (await configuredSecret(source, env)) ?? loadOrCreateSecretFile(join(dataDir, source.file), dataDir);
}

/** The same secret where one exists already (the variable, its _FILE, or the data directory's file), else null: nothing is created. */
export async function existingServerSecret(dataDir: string, source: ServerSecretSource, env: NodeJS.ProcessEnv = process.env): Promise<Buffer | null> {
  const file = join(dataDir, source.file);
  return (await configuredSecret(source, env)) ?? readFile(file, 'utf8').then((hex) => parseSecret(hex, file), ignoreMissing);
}

/** The secret the environment gives: the variable itself, or the file its _FILE variable names (which must exist). */
async function configuredSecret(source: ServerSecretSource, env: NodeJS.ProcessEnv): Promise<Buffer | null> {
  const fromEnv = env[source.env];
  if (fromEnv) return parseSecret(fromEnv, source.env);
  const file = env[`${source.env}_FILE`];
  if (!file) return null;
  const hex = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new Error(`${source.env}_FILE names ${file}, which cannot be read (${error.code ?? error.message})`);
  });
  return parseSecret(hex, file);
}

function parseSecret(hex: string, where: string): Buffer {
  const value = hex.trim();
  if (!/^([0-9a-fA-F]{2}){32,}$/.test(value)) throw new Error(`${where} must be at least 32 bytes as hex (64+ hex digits)`);
  return Buffer.from(value, 'hex');
}

function ignoreMissing(error: NodeJS.ErrnoException): null {
  if (error.code === 'ENOENT') return null;
  throw error;
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
