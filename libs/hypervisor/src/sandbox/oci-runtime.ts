import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_EXEC_ENV } from '../guest-environment';
import { runCommand } from '../host/run-command';

/**
 * runc, the OCI runtime the sandbox runs machines with. Chosen over crun (both are in Debian 12):
 * runc is the OCI reference implementation that Docker, containerd and Kubernetes run by default,
 * and crun 1.8 refuses to start any container on a host with the hybrid cgroup layout (cgroup v1
 * controllers plus a cgroup2 hierarchy that offers a controller, as on this project's hosts:
 * "cgroups in hybrid mode not supported"), while runc runs on v1, hybrid and v2 alike. Its cost:
 * a Go binary, so each call takes tens of milliseconds where crun takes a few.
 *
 * Its state (one directory per container) lives under `root`, inside the driver's state directory,
 * so a restarted worker finds the machines again with the same runtime view.
 */
export interface ContainerState {
  /** runc's view: created, running, paused or stopped. */
  status: 'created' | 'running' | 'paused' | 'stopped';
  /** Host PID of the container's init (0 once stopped). */
  pid: number;
}

/**
 * A subreaper for one container (perl: in every host and guest Debian): becomes the child
 * subreaper (prctl PR_SET_CHILD_SUBREAPER, syscall 157 on x86_64), runs `runc run --detach`,
 * says "started" (or "failed <status>") on stdout and closes it, then reaps the container's init,
 * which runc's exit left to it, and exits when nothing is left to reap. runc and the container get
 * the log as stdout, never that pipe: they would hold it open.
 */
const CONTAINER_SHIM = String.raw`
syscall(157, 36, 1, 0, 0, 0) == 0 or die "prctl(PR_SET_CHILD_SUBREAPER): $!\n";
my $runc = fork() // die "fork: $!\n";
if ($runc == 0) { open(STDOUT, '>&', \*STDERR) or die "stdout: $!\n"; exec(@ARGV) or die "exec $ARGV[0]: $!\n" }
waitpid($runc, 0);
my $status = $?;
print STDOUT ($status == 0 ? "started\n" : "failed $status\n");
close(STDOUT);
exit(1) if $status != 0;
1 while wait() != -1;
`;

/** runc reads nothing of the worker's environment but PATH (for its own helpers). */
const RUNC_ENV = { PATH: DEFAULT_EXEC_ENV.PATH };

export class OciRuntime {
  constructor(readonly root: string) {}

  /**
   * Creates and starts container `id` from the bundle directory (its config.json), detached: the
   * init, with its stdout and stderr in `logFile`, outlives the worker. runc itself exits once
   * the init runs, so the init is started under a small subreaper (CONTAINER_SHIM, what
   * containerd-shim does for containerd): left to whatever PID 1 the host has, a stopped init
   * would stay a zombie until that PID 1 got round to reaping it.
   */
  async run(id: string, bundle: string, logFile: string): Promise<void> {
    const log = await open(logFile, 'a');
    try {
      const shim = spawn('perl', ['-e', CONTAINER_SHIM, '--', 'runc', ...this.argv('run', '--detach', '--bundle', bundle, id)], {
        stdio: ['ignore', 'pipe', log.fd],
        env: RUNC_ENV,
        detached: true,
      });
      // The shim's one line says how runc's start went; then it is left to reap on its own.
      const started = await new Promise<string>((resolve, reject) => {
        let line = '';
        shim.once('error', reject);
        shim.stdout!.on('data', (chunk: Buffer) => (line += chunk.toString()));
        shim.stdout!.once('close', () => resolve(line.trim()));
      });
      shim.unref();
      if (started !== 'started') {
        const output = (await readFile(logFile, 'utf8').catch(() => '')).trim().split('\n').slice(-5).join('\n');
        throw new Error(`runc run ${id} failed (${started || 'no answer'}): ${output}`);
      }
    } finally {
      await log.close();
    }
  }

  /** The container's state, or null when runc has no such container. */
  async state(id: string): Promise<ContainerState | null> {
    try {
      const { status, pid } = JSON.parse(await this.runc('state', id)) as ContainerState;
      return { status, pid };
    } catch (error) {
      if (/container does not exist/.test((error as Error).message)) return null;
      throw error;
    }
  }

  /**
   * The host PID of a container's init, as runc recorded it on creating the container (runc 1.x:
   * `init_process_pid` in `<root>/<id>/state.json`): read from that file, not by starting a
   * `runc state` (a Go binary: ~10 ms a call); asked of runc when the file does not say. Null when
   * runc knows no such container or its init is gone.
   */
  async initPid(id: string): Promise<number | null> {
    const recorded = await readFile(join(this.root, id, 'state.json'), 'utf8')
      .then((text) => (JSON.parse(text) as { init_process_pid?: unknown }).init_process_pid)
      .catch(() => undefined);
    if (typeof recorded === 'number' && Number.isInteger(recorded) && recorded > 0) return recorded;
    const state = await this.state(id);
    return state && state.pid > 0 ? state.pid : null;
  }

  /** Freezes (runc pause) or thaws (runc resume) every process of the container: the cgroup freezer. */
  async setPaused(id: string, paused: boolean): Promise<void> {
    await this.runc(paused ? 'pause' : 'resume', id);
  }

  /** Kills whatever runs in the container (thawing it first) and removes its cgroups and state. */
  async delete(id: string): Promise<void> {
    await this.runc('delete', '--force', id);
  }

  /** Whether runc keeps state for container `id` (read from its state directory, no runc process). */
  knows(id: string): boolean {
    return existsSync(join(this.root, id, 'state.json'));
  }

  /**
   * Drops runc's state of a container whose processes and cgroups are gone (killed and removed by
   * the driver: removeLeftoverCgroups), which is all `runc delete` would still do for it: a
   * directory of its own under the runtime's root (runc 1.x: `<root>/<id>/state.json`).
   */
  async forget(id: string): Promise<void> {
    await rm(join(this.root, id), { recursive: true, force: true });
  }

  /**
   * argv of `runc exec`: `argv` runs in the container with the init's confinement (namespaces,
   * cgroups, capabilities, seccomp, no_new_privs); its host PID goes to `pidFile`. The process is
   * a session leader: killing its process group takes everything it started.
   */
  execArgv(id: string, pidFile: string, argv: string[]): string[] {
    return ['runc', ...this.argv('exec', '--pid-file', pidFile, id, ...argv)];
  }

  private argv(...args: string[]): string[] {
    return ['--root', this.root, ...args];
  }

  private runc(...args: string[]): Promise<string> {
    return runCommand('runc', this.argv(...args));
  }
}
