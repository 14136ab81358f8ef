import { randomUUID } from 'node:crypto';
import type { ExecChunk, ExecResult, ExecSpec } from '../hypervisor-driver.port';
import { OrderedOutputDecoder, orderedOutputArgv } from '../ordered-output';
import type { GuestAgentClient } from './guest-agent-client';
import { exitCodeOf, GUEST_DEFAULT_ENV, waitForGuestExit } from './guest-command';

/**
 * The in-guest wrapper: environment like a login (defaults, then /etc/environment, then the exec's
 * own KEY=VALUE arguments up to `--`), the working directory, and `timeout` (its own process
 * group, so everything the command started is killed too; exit code 124).
 */
const WRAPPER = `secs=$1 dir=$2; shift 2
if [ -r /etc/environment ]; then
  while IFS= read -r line || [ -n "$line" ]; do
    case $line in [A-Za-z_]*=*) export "$line" ;; esac
  done < /etc/environment
fi
while [ "$1" != -- ]; do export "$1"; shift; done; shift
cd "$dir" || exit 1
if [ "$secs" -gt 0 ]; then exec timeout -k 5 "$secs" "$@"; fi
exec "$@"`;

/** Bytes asked for per guest-file-read (the agent allows up to 48 MiB; base64 grows it by 4/3). */
const READ_CHUNK = 1 << 20;

/**
 * Runs argv in the guest with guest-exec. guest-exec returns output only when the process has
 * ended, so for streaming the wrapper runs under the ordered-output program (ordered-output.ts),
 * which appends stdout and stderr as records, in the order the command wrote them, to one file in
 * the guest's /run (tmpfs); the driver reads what is new between guest-exec-status polls (every
 * 15-100 ms). The program unlinks the file at the end; the driver's open handle keeps it readable.
 * What the program itself prints on stderr (it could not start) comes last, as stderr.
 */
export async function execInGuest(
  agent: GuestAgentClient,
  spec: ExecSpec,
  onChunk: (chunk: ExecChunk) => void,
): Promise<ExecResult> {
  const path = `/run/arbor-exec-${randomUUID()}`;
  const handle = await agent.request<number>('guest-file-open', { path, mode: 'w+' });
  try {
    const envPairs = Object.entries(spec.env ?? {}).map(([key, value]) => `${key}=${value}`);
    const wrapped = ['/bin/sh', '-c', WRAPPER, 'arbor-exec', String(spec.timeout_secs ?? 0), spec.working_dir || '/', ...envPairs, '--', ...spec.argv];
    const [program, ...args] = orderedOutputArgv(path, wrapped);
    const { pid } = await agent.request<{ pid: number }>('guest-exec', {
      path: program,
      arg: args,
      env: GUEST_DEFAULT_ENV,
      'capture-output': true,
      ...(spec.stdin !== undefined ? { 'input-data': Buffer.from(spec.stdin, 'utf8').toString('base64') } : {}),
    });
    const decoder = new OrderedOutputDecoder(onChunk);
    const drain = async () => {
      for (;;) {
        // A read at end of file leaves stdio's sticky EOF flag set; a seek clears it.
        await agent.request('guest-file-seek', { handle, offset: 0, whence: 'cur' });
        const read = await agent.request<{ count: number; 'buf-b64'?: string }>('guest-file-read', { handle, count: READ_CHUNK });
        if (read.count > 0) decoder.push(Buffer.from(read['buf-b64'] ?? '', 'base64'));
        if (read.count < READ_CHUNK) break;
      }
    };
    // Status first, then drain: once the status says exited, that drain has read everything.
    const status = await waitForGuestExit(agent, pid, drain);
    const ownErrors = Buffer.from(status['err-data'] ?? '', 'base64');
    if (ownErrors.length > 0) onChunk({ stream: 'stderr', data: ownErrors });
    return { exit_code: exitCodeOf(status) };
  } finally {
    await agent.request('guest-file-close', { handle }).catch(() => undefined);
  }
}
