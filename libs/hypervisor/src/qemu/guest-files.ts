import { GuestFileError, type WriteFileOptions } from '../hypervisor-driver.port';
import { GuestAgentError, type GuestAgentClient } from './guest-agent-client';
import { kitShell } from '../kit/kit-paths';
import { runInGuest } from './guest-command';

const CHUNK = 1 << 20;

/** The agent reports open/read failures as strerror text; map them to the port's reasons. */
function fileError(path: string, error: unknown): Error {
  if (!(error instanceof GuestAgentError)) return error as Error;
  const reason = /Is a directory/.test(error.desc)
    ? 'not_a_file'
    : /No such file or directory|Not a directory/.test(error.desc)
      ? 'not_found'
      : 'other';
  return new GuestFileError(path, reason, `${path}: ${error.desc}`);
}

/**
 * Reads a whole guest file through guest-file-open/read/close, a chunk at a time, never more than
 * maxBytes + 1 bytes: a device or a sparse giant file is refused as too large once past the cap.
 */
export async function readGuestFile(agent: GuestAgentClient, path: string, maxBytes = Number.MAX_SAFE_INTEGER): Promise<Buffer> {
  const handle = await agent.request<number>('guest-file-open', { path, mode: 'r' }).catch((error) => {
    throw fileError(path, error);
  });
  try {
    const parts: Buffer[] = [];
    let total = 0;
    for (;;) {
      const count = Math.min(CHUNK, maxBytes + 1 - total);
      const read = await agent
        .request<{ count: number; 'buf-b64'?: string; eof: boolean }>('guest-file-read', { handle, count })
        .catch((error) => {
          throw fileError(path, error);
        });
      if (read.count > 0) parts.push(Buffer.from(read['buf-b64'] ?? '', 'base64'));
      total += read.count;
      if (total > maxBytes) throw GuestFileError.tooLarge(path, maxBytes);
      if (read.eof || read.count === 0) return Buffer.concat(parts);
    }
  } finally {
    await agent.request('guest-file-close', { handle }).catch(() => undefined);
  }
}

/**
 * Prepares the target in one guest command on the kit's shell (parent directory, not-a-directory
 * check, the file's mode: the agent itself creates files 0666), then writes the content through
 * guest-file-open/write/close, which truncates but keeps that mode.
 */
const PREPARE = `path=$1 mode=$2 create_dirs=$3
dir=$(dirname "$path")
if [ ! -d "$dir" ]; then
  [ "$create_dirs" = 1 ] || { echo "parent directory $dir does not exist" >&2; exit 20; }
  mkdir -p "$dir" || exit 1
fi
[ -d "$path" ] && { echo "$path is a directory" >&2; exit 21; }
: >> "$path" && chmod "$mode" "$path"`;

export async function writeGuestFile(
  agent: GuestAgentClient,
  path: string,
  content: Buffer,
  options: WriteFileOptions = {},
): Promise<void> {
  const mode = (options.mode ?? 0o644).toString(8);
  const prepared = await runInGuest(agent, kitShell(PREPARE, 'arbor-write', path, mode, options.create_dirs ? '1' : '0'));
  if (prepared.exit_code !== 0) {
    const reason = { 20: 'parent_missing', 21: 'not_a_file' }[prepared.exit_code] ?? 'other';
    throw new GuestFileError(path, reason as GuestFileError['reason'], `${path}: ${prepared.stderr.toString().trim()}`);
  }
  const handle = await agent.request<number>('guest-file-open', { path, mode: 'w' }).catch((error) => {
    throw fileError(path, error);
  });
  try {
    for (let offset = 0; offset < content.length; offset += CHUNK) {
      const part = content.subarray(offset, offset + CHUNK);
      await agent.request('guest-file-write', { handle, 'buf-b64': part.toString('base64') });
    }
  } finally {
    await agent.request('guest-file-close', { handle }).catch(() => undefined);
  }
}
