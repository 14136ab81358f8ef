import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { arch, release, version } from 'node:os';
import { join } from 'node:path';
import { writeFileAtomic } from '@arbor/durable-files';
import { ensurePrivateDirectory } from '../host/private-directory';
import { runCommand } from '../host/run-command';
import type { OciRuntime } from './oci-runtime';
import type { OciSeccomp } from './seccomp-profile';

/** The config annotation through which crun takes a seccomp program ready-made (base64 of its BPF). */
export const SECCOMP_PROGRAM_ANNOTATION = 'run.oci.seccomp_bpf_data';

/** A BPF instruction (struct sock_filter) is 8 bytes; a program has at most BPF_MAXINSNS of them. */
const BPF_INSTRUCTION_BYTES = 8;
const BPF_MAX_INSTRUCTIONS = 4096;

/**
 * The machines' seccomp profile as crun compiled it, kept to be handed back. crun compiles the
 * profile (Docker's default, some 350 rules) into a BPF program with libseccomp at every start:
 * 25–40 ms of a 45–60 ms `crun run` on this project's hosts. Given the program in the config's
 * SECCOMP_PROGRAM_ANNOTATION (as podman passes it), crun loads exactly those bytes instead.
 *
 * The program comes from crun itself: once a machine has started with the profile, crun's own
 * compilation is in its state (OciRuntime.compiledSeccomp). It is kept under a key made of all
 * the compilation depends on (the profile, crun's version, the libseccomp it loads, the kernel
 * and architecture), so a change of any of them compiles afresh, and a machine started from it
 * runs the same filter one compiled for it would. In the driver's state directory (root's alone),
 * beside the machines' configs, which are as much trusted.
 */
export class SeccompPrograms {
  /** Each profile's file, named once per driver (the profile and toolchain hashed): a boot only reads it. */
  private readonly files = new WeakMap<OciSeccomp, Promise<string>>();

  constructor(private readonly dir: string) {}

  /**
   * The program kept for `seccomp` under `runtime`, or null: runc (which takes none), none kept
   * yet, or a toolchain that cannot be named (then crun compiles, as without this).
   */
  async lookup(runtime: OciRuntime, seccomp: OciSeccomp): Promise<Buffer | null> {
    if (runtime.name !== 'crun') return null;
    const file = await this.file(runtime, seccomp).catch(() => null);
    const program = file && (await readFile(file).catch(() => null));
    return program && isBpfProgram(program) ? program : null;
  }

  /** Keeps the program crun compiled for container `id`, started with `seccomp`, if none is kept. */
  async keep(runtime: OciRuntime, id: string, seccomp: OciSeccomp): Promise<void> {
    if (runtime.name !== 'crun') return;
    const program = await runtime.compiledSeccomp(id);
    if (!program || !isBpfProgram(program)) throw new Error(`crun left no seccomp program for ${id}`);
    await ensurePrivateDirectory(this.dir);
    await writeFileAtomic(await this.file(runtime, seccomp), program, { mode: 0o600, ifAbsent: true });
  }

  private file(runtime: OciRuntime, seccomp: OciSeccomp): Promise<string> {
    let file = this.files.get(seccomp);
    if (!file) {
      file = toolchainOf(runtime).then((toolchain) => join(this.dir, `${createHash('sha256').update(toolchain).update(JSON.stringify(seccomp)).digest('hex')}.bpf`));
      this.files.set(seccomp, file);
      file.catch(() => this.files.delete(seccomp)); // named again at the next boot
    }
    return file;
  }
}

/**
 * What a compiled program depends on besides the profile: crun's version, libseccomp's file, the
 * kernel. Named once per driver: an upgrade while the worker runs takes effect at its restart.
 */
async function toolchainOf(runtime: OciRuntime): Promise<string> {
  const crun = await runCommand(runtime.name, ['--version']);
  // crun names no libseccomp version: the library file it loads stands for it.
  const libraries = await runCommand('sh', ['-c', 'ldd "$(command -v "$1")"', 'sh', runtime.name]);
  const library = /libseccomp\S*\s+=>\s+(\S+)/.exec(libraries)?.[1];
  if (!library) throw new Error(`${runtime.name} loads no libseccomp`);
  const { size, mtimeMs, ino } = await stat(library);
  return JSON.stringify({ crun, library, size, mtimeMs, ino, kernel: [release(), version(), arch()] });
}

function isBpfProgram(program: Buffer): boolean {
  return program.length > 0 && program.length % BPF_INSTRUCTION_BYTES === 0 && program.length / BPF_INSTRUCTION_BYTES <= BPF_MAX_INSTRUCTIONS;
}
