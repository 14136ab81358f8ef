import { SSHD_ENVIRONMENT_CONF, SSHD_PID_FILE } from '../kit/kit-files';
import { KIT_PATHS, kitShell } from '../kit/kit-paths';
import { execInContainer, type ContainerExecTarget } from './container-exec';

/**
 * The kit's sshd takes the machine's environment from SetEnv lines made from /etc/environment as
 * it starts (kit-files.ts): it has no PAM to read the file per session. This makes them afresh and
 * has the running sshd read its settings again (SIGHUP: it executes itself anew under the same pid
 * and writes its pid file once it listens again), waiting for that; no sshd running: the
 * supervisor's next start reads the file itself.
 */
const REFRESH = `bb=${KIT_PATHS.busybox}
${KIT_PATHS.helper} sshd-environment /etc/environment > ${SSHD_ENVIRONMENT_CONF} || exit 1
old=$($bb cat ${SSHD_PID_FILE} 2>/dev/null)
{ [ -n "$old" ] && $bb kill -0 "$old" 2>/dev/null; } || exit 0
$bb rm -f ${SSHD_PID_FILE}
$bb kill -HUP "$old" 2>/dev/null || exit 0
end=$(( $($bb date +%s) + 10 ))
until sshd=$($bb cat ${SSHD_PID_FILE} 2>/dev/null) && [ -n "$sshd" ] && $bb kill -0 "$sshd" 2>/dev/null; do
  [ "$($bb date +%s)" -lt "$end" ] || { echo "sshd did not start again with the new environment" >&2; exit 1; }
  $bb sleep 0.02
done`;

/**
 * Has a running machine's SSH sessions get the variables its /etc/environment holds now: for a
 * warm machine claimed by a VM with variables (warm-pool.ts), whose sshd started with none.
 */
export async function refreshSshEnvironment(target: ContainerExecTarget): Promise<void> {
  const stderr: Buffer[] = [];
  const { exit_code } = await execInContainer(target, { argv: kitShell(REFRESH, 'arbor-sshd-environment'), timeout_secs: 30 }, (chunk) => {
    if (chunk.stream === 'stderr') stderr.push(chunk.data);
  });
  if (exit_code !== 0) throw new Error(`refreshing the SSH environment exited ${exit_code}: ${Buffer.concat(stderr).toString().trim()}`);
}
