/**
 * argv that first moves itself into the given cgroups, then execs `command`: a process must join
 * the machine's cgroups BEFORE it forks, so that every descendant is limited and frozen with it.
 * Paths are passed as arguments, never spliced into the script.
 */
export function inCgroups(procsFiles: string[], command: string[]): string[] {
  const script = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"';
  return ['sh', '-c', script, 'sh', ...procsFiles, '--', ...command];
}
