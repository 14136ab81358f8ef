/**
 * What a deploy runs in its VM with `/bin/sh` (every image Arbor boots has one, with tar, tail and
 * setsid: the Debian default's coreutils and util-linux).
 */

/** Where the run command's state (its pid, then its exit status) and its output live in the VM. */
export const runStateDir = (project_id: string): string => `/run/arbor-deploy/${project_id}`;
export const runLogFile = (project_id: string): string => `/var/log/arbor-deploy/${project_id}.log`;

/**
 * `sh -c EXTRACT arbor-deploy <stage> <dest> <workdir>`: the tree's tar, written in parts into
 * `<stage>`, unpacked into `<dest>` (emptied first: a copy taken again after a crash starts clean),
 * the parts removed; fails saying so when the working directory is not in the tree.
 */
export const EXTRACT_SCRIPT = `set -eu
stage=$1 dest=$2 workdir=$3
rm -rf -- "$dest"
mkdir -p -- "$dest"
cat "$stage"/part-* | tar -x -f - -C "$dest"
rm -rf -- "$stage"
if [ ! -d "$workdir" ]; then echo "the working directory $workdir is not a directory of the repository" >&2; exit 3; fi`;

/**
 * The end both run scripts share: follows the log until the command's session leader exits (its
 * output to the exec, or, quiet, nowhere), then exits with the command's own status (the exec's
 * exit code is the run command's).
 */
const FOLLOW = `pid=$(cat -- "$state/pid")
if [ "$quiet" = 1 ]; then tail -n "$from" --pid="$pid" -f -- "$log" >/dev/null; else tail -n "$from" --pid="$pid" -f -- "$log"; fi
i=0; while [ ! -e "$state/exit" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
if [ -e "$state/exit" ]; then exit "$(cat -- "$state/exit")"; fi
echo "arbor: the run command ended without an exit status (killed?)" >&2
exit 255`;

/**
 * `sh -c RUN_SCRIPT arbor-run <state dir> <log file> <run command>`, in the working directory:
 * starts the command detached (a session of its own, stdin from /dev/null, its output appended to
 * the log file; the double fork leaves it to the VM's init), so it outlives this exec, the worker
 * and the exec's output cap; then follows its output from the start, so the exec's logs show it.
 */
export const RUN_SCRIPT = `set -u
state=$1 log=$2 from=+1 quiet=0
mkdir -p -- "$state" "$(dirname -- "$log")"
rm -f -- "$state/pid" "$state/exit"
: >> "$log"
( setsid /bin/sh -c 'echo $$ > "$1/pid.tmp" && mv -- "$1/pid.tmp" "$1/pid"; /bin/sh -c "$2"; echo $? > "$1/exit.tmp"; mv -- "$1/exit.tmp" "$1/exit"' arbor-app "$state" "$3" </dev/null >>"$log" 2>&1 & )
i=0; while [ ! -s "$state/pid" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
[ -s "$state/pid" ] || { echo "arbor: the run command did not start" >&2; exit 255; }
${FOLLOW}`;

/**
 * `sh -c FOLLOW_SCRIPT arbor-follow <state dir> <log file> <quiet>`: takes over following a run
 * command already started, from the log's end: its follower was lost with a worker restart, or
 * (quiet: 1) stopped at the exec output cap, after which only the command's end is followed.
 */
export const FOLLOW_SCRIPT = `set -u
state=$1 log=$2 from=0 quiet=$3
[ -s "$state/pid" ] || { echo "arbor: the run command's state is gone" >&2; exit 255; }
[ "$quiet" = 1 ] && echo "arbor: the run command's output passed the exec output cap: it goes on in $log only"
${FOLLOW}`;
