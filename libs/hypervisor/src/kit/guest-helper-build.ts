import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { runCommand } from '../host/run-command';

/**
 * The source of the static guest helper (arbor-guest.c), found from the source tree or the build
 * (dist/ keeps the tree's shape and the source sits in the repository beside it).
 */
export function guestHelperSource(from: string = __dirname): string {
  const relative = join('libs', 'hypervisor', 'src', 'kit', 'arbor-guest.c');
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, relative))) return join(dir, relative);
    if (dirname(dir) === dir) throw new Error(`arbor-guest.c not found above ${from}`);
  }
}

/**
 * Compiles the helper into `output`, statically linked (gcc -static with glibc's static
 * libraries, from Debian's gcc and libc6-dev): it runs in any machine whatever libc its image has,
 * or none, and on the host for the host-side checks of a root filesystem.
 */
export async function compileGuestHelper(output: string): Promise<void> {
  await runCommand('gcc', ['-static', '-O2', '-o', output, guestHelperSource()]).catch((error: Error) => {
    throw new Error(`compiling the guest helper failed (apt-get install gcc libc6-dev): ${error.message}`);
  });
}
