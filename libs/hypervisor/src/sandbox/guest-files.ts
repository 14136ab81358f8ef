import { GuestFileError, type ExecChunk } from '../hypervisor-driver.port';
import { kitShell } from '../kit/kit-paths';
import { execInContainer, type ContainerExecTarget } from './container-exec';

/** Exit codes the scripts below use to say why they refused. */
const NOT_FOUND = 66;
const NOT_A_FILE = 67;
const PARENT_MISSING = 68;

/** Reads at most $2 bytes: a sparse 1 TiB file costs no more than the cap to refuse. */
const READ_SCRIPT = `[ -e "$1" ] || exit ${NOT_FOUND}; [ -f "$1" ] || exit ${NOT_A_FILE}; exec head -c "$2" -- "$1"`;

/** Mode set before the content goes in, so a secret is never readable under a looser mode. */
const WRITE_SCRIPT = [
  'dir=$(dirname -- "$1")',
  `if [ ! -d "$dir" ]; then [ "$3" = 1 ] || exit ${PARENT_MISSING}; mkdir -p -- "$dir" || exit 1; fi`,
  `[ -d "$1" ] && exit ${NOT_A_FILE}`,
  ': >> "$1" && chmod "$2" -- "$1" && exec cat > "$1"',
].join('\n');

/**
 * Guest file access runs inside the machine (its namespaces and root), never through host paths:
 * a guest's symlink then resolves inside the guest, as it would for any process there. The scripts
 * run on the guest kit's busybox, so an image without a shell or coreutils is served too.
 */
export async function readGuestFile(target: ContainerExecTarget, path: string, maxBytes = Number.MAX_SAFE_INTEGER): Promise<Buffer> {
  requireAbsolute(path);
  const { exitCode, stdout, stderr } = await run(target, kitShell(READ_SCRIPT, 'sh', path, String(maxBytes + 1)));
  if (exitCode === NOT_FOUND) throw new GuestFileError(path, 'not_found', `${path}: no such file in the machine`);
  if (exitCode === NOT_A_FILE) throw new GuestFileError(path, 'not_a_file', `${path} is not a regular file`);
  if (exitCode !== 0) throw new GuestFileError(path, 'other', `reading ${path} failed (${exitCode}): ${stderr}`);
  if (stdout.length > maxBytes) throw GuestFileError.tooLarge(path, maxBytes);
  return stdout;
}

export async function writeGuestFile(
  target: ContainerExecTarget,
  path: string,
  content: Buffer,
  options: { mode: number; createDirs: boolean },
): Promise<void> {
  requireAbsolute(path);
  const argv = kitShell(WRITE_SCRIPT, 'sh', path, options.mode.toString(8), options.createDirs ? '1' : '0');
  const { exitCode, stderr } = await run(target, argv, content);
  if (exitCode === PARENT_MISSING) {
    throw new GuestFileError(path, 'parent_missing', `parent directory of ${path} does not exist (use create_dirs)`);
  }
  if (exitCode === NOT_A_FILE) throw new GuestFileError(path, 'not_a_file', `${path} is a directory`);
  if (exitCode !== 0) throw new GuestFileError(path, 'other', `writing ${path} failed (${exitCode}): ${stderr}`);
}

function requireAbsolute(path: string): void {
  if (!path.startsWith('/')) throw new GuestFileError(path, 'other', `guest path ${path} must be absolute`);
}

async function run(target: ContainerExecTarget, argv: string[], stdin?: Buffer) {
  const chunks: ExecChunk[] = [];
  const { exit_code } = await execInContainer(target, { argv, stdin }, (chunk) => chunks.push(chunk));
  const joined = (stream: ExecChunk['stream']) => Buffer.concat(chunks.filter((c) => c.stream === stream).map((c) => c.data));
  return { exitCode: exit_code, stdout: joined('stdout'), stderr: joined('stderr').toString().trim() };
}
