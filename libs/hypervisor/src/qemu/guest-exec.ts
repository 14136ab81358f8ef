import { randomUUID } from 'node:crypto';
import type { ExecChunk, ExecResult, ExecSpec } from '../hypervisor-driver.port';
import type { GuestAgentClient } from './guest-agent-client';
import { exitCodeOf, GUEST_DEFAULT_ENV, waitForGuestExit } from './guest-command';

/**
 * The in-guest wrapper: environment like a login (defaults, then /etc/environment, then the exec's
 * own KEY=VALUE arguments up to `--`), the working directory, `timeout` (its own process group,
 * so everything the command started is killed too; exit code 124), and output appended to the two
 * files the driver reads while the command runs. The files are unlinked at the end: the driver's
 * open handles keep them readable until it closes them.
 */
const WRAPPER = `out=$1 err=$2 secs=$3 dir=$4; shift 4
exec >>"$out" 2>>"$err"
if [ -r /etc/environment ]; then
  while IFS= read -r line || [ -n "$line" ]; do
    case $line in [A-Za-z_]*=*) export "$line" ;; esac
  done < /etc/environment
fi
while [ "$1" != -- ]; do export "$1"; shift; done; shift
code=0
if cd "$dir"; then
  if [ "$secs" -gt 0 ]; then timeout -k 5 "$secs" "$@"; else "$@"; fi
  code=$?
else
  code=1
fi
rm -f "$out" "$err"
exit $code`;

/** Bytes asked for per guest-file-read (the agent allows up to 48 MiB; base64 grows it by 4/3). */
const READ_CHUNK = 1 << 20;

/**
 * Runs argv in the guest with guest-exec. guest-exec returns output only when the process has
 * ended, so for streaming the command writes stdout and stderr to files in the guest's /run
 * (tmpfs) and the driver reads what is new from both between guest-exec-status polls; chunks of
 * the two streams are therefore ordered per poll (every 15-100 ms), not byte by byte.
 */
export async function execInGuest(
  agent: GuestAgentClient,
  spec: ExecSpec,
  onChunk: (chunk: ExecChunk) => void,
): Promise<ExecResult> {
  const base = `/run/arbor-exec-${randomUUID()}`;
  const streams = [
    { stream: 'stdout' as const, path: `${base}.out`, handle: 0 },
    { stream: 'stderr' as const, path: `${base}.err`, handle: 0 },
  ];
  for (const entry of streams) {
    entry.handle = await agent.request<number>('guest-file-open', { path: entry.path, mode: 'w+' });
  }
  try {
    const envPairs = Object.entries(spec.env ?? {}).map(([key, value]) => `${key}=${value}`);
    const { pid } = await agent.request<{ pid: number }>('guest-exec', {
      path: '/bin/sh',
      arg: [
        '-c', WRAPPER, 'arbor-exec',
        streams[0].path, streams[1].path, String(spec.timeout_secs ?? 0), spec.working_dir || '/',
        ...envPairs, '--', ...spec.argv,
      ],
      env: GUEST_DEFAULT_ENV,
      ...(spec.stdin !== undefined ? { 'input-data': Buffer.from(spec.stdin, 'utf8').toString('base64') } : {}),
    });
    const drain = async () => {
      for (const entry of streams) {
        for (;;) {
          // A read at end of file leaves stdio's sticky EOF flag set; a seek clears it.
          await agent.request('guest-file-seek', { handle: entry.handle, offset: 0, whence: 'cur' });
          const read = await agent.request<{ count: number; 'buf-b64'?: string }>('guest-file-read', {
            handle: entry.handle,
            count: READ_CHUNK,
          });
          if (read.count > 0) onChunk({ stream: entry.stream, data: Buffer.from(read['buf-b64'] ?? '', 'base64') });
          if (read.count < READ_CHUNK) break;
        }
      }
    };
    // Status first, then drain: once the status says exited, that drain has read everything.
    const status = await waitForGuestExit(agent, pid, drain);
    return { exit_code: exitCodeOf(status) };
  } finally {
    for (const entry of streams) await agent.request('guest-file-close', { handle: entry.handle }).catch(() => undefined);
  }
}
