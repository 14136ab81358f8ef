import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_EXEC_ENV } from '../guest-environment';
import { runCommand } from '../host/run-command';

/**
 * The OCI runtimes the sandbox runs machines with, both in Debian 12 and both speaking the same
 * command line (run --detach, exec --pid-file, state, pause, resume, delete) over the same
 * config.json:
 * - crun (C): an exec ~10 ms and a start 20–30 ms on this project's hosts (40–60 ms when it
 *   compiles the seccomp profile, which seccomp-programs.ts spares all but the first start),
 *   against runc's ~45 and ~55 ms; preferred wherever it runs
 *   (runtime-choice.ts). crun 1.8 refuses a
 *   host with the hybrid cgroup layout whose cgroup2 hierarchy offers a controller ("cgroups in
 *   hybrid mode not supported, drop all controllers from cgroupv2"); the driver can give such a
 *   controller a v1 hierarchy of its own (hybrid-cgroups.ts).
 * - runc (Go), the OCI reference implementation: tens of milliseconds a call, but it runs on v1,
 *   hybrid and v2 alike; the fallback, and what machines started before crun was chosen go on with.
 *
 * A runtime's state (one directory per container) lives under `root`, inside the driver's state
 * directory, so a restarted worker finds the machines again with the same runtime view.
 */
export type OciRuntimeName = 'crun' | 'runc';

/**
 * Where each runtime keeps a container's state under its root (`<root>/<id>/<file>`), and the
 * field there holding its init's host PID: what `knows` and `initPid` read without a runtime process.
 */
const STATE_FILE: Record<OciRuntimeName, { file: string; initPid: string }> = {
  runc: { file: 'state.json', initPid: 'init_process_pid' },
  crun: { file: 'status', initPid: 'pid' },
};

/** A runtime whose state lives in `<stateDir>/.<name>`, where the driver keeps each runtime's. */
export function runtimeUnder(stateDir: string, name: OciRuntimeName): OciRuntime {
  return new OciRuntime(join(stateDir, `.${name}`), name);
}

export interface ContainerState {
  /** The runtime's view: created, running, paused or stopped. */
  status: 'created' | 'running' | 'paused' | 'stopped';
  /** Host PID of the container's init (0 once stopped). */
  pid: number;
}

/**
 * A subreaper for one container (perl: in every host and guest Debian): becomes the child
 * subreaper (prctl PR_SET_CHILD_SUBREAPER, syscall 157 on x86_64), runs `<runtime> run --detach`,
 * says "started" (or "failed <status>") on stdout and closes it, then reaps the container's init,
 * which the runtime's exit left to it, and exits when nothing is left to reap. The runtime and the
 * container get the log as stdout, never that pipe: they would hold it open.
 */
const CONTAINER_SHIM = String.raw`
syscall(157, 36, 1, 0, 0, 0) == 0 or die "prctl(PR_SET_CHILD_SUBREAPER): $!\n";
my $runtime = fork() // die "fork: $!\n";
if ($runtime == 0) { open(STDOUT, '>&', \*STDERR) or die "stdout: $!\n"; exec(@ARGV) or die "exec $ARGV[0]: $!\n" }
waitpid($runtime, 0);
my $status = $?;
print STDOUT ($status == 0 ? "started\n" : "failed $status\n");
close(STDOUT);
exit(1) if $status != 0;
1 while wait() != -1;
`;

/** The runtime reads nothing of the worker's environment but PATH (for its own helpers). */
const RUNTIME_ENV = { PATH: DEFAULT_EXEC_ENV.PATH };

export class OciRuntime {
  constructor(
    readonly root: string,
    readonly name: OciRuntimeName,
  ) {}

  /**
   * Creates and starts container `id` from the bundle directory (its config.json), detached: the
   * init, with its stdout and stderr in `logFile`, outlives the worker. The runtime exits once
   * the init runs, so the init is started under a small subreaper (CONTAINER_SHIM, what
   * containerd-shim does for containerd): left to whatever PID 1 the host has, a stopped init
   * would stay a zombie until that PID 1 got round to reaping it.
   */
  async run(id: string, bundle: string, logFile: string): Promise<void> {
    const log = await open(logFile, 'a');
    try {
      const shim = spawn('perl', ['-e', CONTAINER_SHIM, '--', this.name, ...this.argv('run', '--detach', '--bundle', bundle, id)], {
        stdio: ['ignore', 'pipe', log.fd],
        env: RUNTIME_ENV,
        detached: true,
      });
      // The shim's one line says how the runtime's start went; then it is left to reap on its own.
      const started = await new Promise<string>((resolve, reject) => {
        let line = '';
        shim.once('error', reject);
        shim.stdout!.on('data', (chunk: Buffer) => (line += chunk.toString()));
        shim.stdout!.once('close', () => resolve(line.trim()));
      });
      shim.unref();
      if (started !== 'started') {
        const output = (await readFile(logFile, 'utf8').catch(() => '')).trim().split('\n').slice(-5).join('\n');
        throw new Error(`${this.name} run ${id} failed (${started || 'no answer'}): ${output}`);
      }
    } finally {
      await log.close();
    }
  }

  /** The container's state, or null when the runtime has no such container. */
  async state(id: string): Promise<ContainerState | null> {
    if (!this.knows(id)) return null;
    const { status, pid } = JSON.parse(await this.call('state', id)) as ContainerState;
    return { status, pid };
  }

  /**
   * The host PID of a container's init, as the runtime recorded it on creating the container (runc
   * 1.x: `init_process_pid` in `<root>/<id>/state.json`; crun: `pid` in `<root>/<id>/status`):
   * read from that file, not by starting a runtime process; asked of the runtime when the file
   * does not say. Null when the runtime knows no such container or its init is gone.
   */
  async initPid(id: string): Promise<number | null> {
    const recorded = await readFile(this.stateFile(id), 'utf8')
      .then((text) => (JSON.parse(text) as Record<string, unknown>)[STATE_FILE[this.name].initPid])
      .catch(() => undefined);
    if (typeof recorded === 'number' && Number.isInteger(recorded) && recorded > 0) return recorded;
    const state = await this.state(id);
    return state && state.pid > 0 ? state.pid : null;
  }

  /** Freezes (pause) or thaws (resume) every process of the container: the cgroup freezer. */
  async setPaused(id: string, paused: boolean): Promise<void> {
    await this.call(paused ? 'pause' : 'resume', id);
  }

  /** Kills whatever runs in the container (thawing it first) and removes its cgroups and state. */
  async delete(id: string): Promise<void> {
    await this.call('delete', '--force', id);
  }

  /** Whether the runtime keeps state for container `id` (read from its state directory, no runtime process). */
  knows(id: string): boolean {
    return existsSync(this.stateFile(id));
  }

  /**
   * Drops the runtime's state of a container whose processes and cgroups are gone (killed and
   * removed by the driver: removeLeftoverCgroups), which is all `delete` would still do for it: a
   * directory of its own under the runtime's root (STATE_FILE).
   */
  async forget(id: string): Promise<void> {
    await rm(join(this.root, id), { recursive: true, force: true });
  }

  /**
   * argv of `<runtime> exec`: `argv` runs in the container with the init's confinement (namespaces,
   * cgroups, capabilities, seccomp, no_new_privs); its host PID goes to `pidFile`. The process is
   * in a session of its own (runc makes it the leader; crun's exited fork leads it): killing its
   * process group takes everything it started.
   */
  execArgv(id: string, pidFile: string, argv: string[]): string[] {
    // no_new_privs said again: runc takes it from the container's config, crun's exec only from this flag.
    return [this.name, ...this.argv('exec', '--no-new-privs', '--pid-file', pidFile, id, ...argv)];
  }

  /**
   * The seccomp program crun compiled for container `id` and loads into each of its processes
   * (`<root>/<id>/seccomp.bpf`, crun's own state, written before the container ran anything);
   * null under runc, which keeps none, or when there is none.
   */
  async compiledSeccomp(id: string): Promise<Buffer | null> {
    if (this.name !== 'crun') return null;
    return readFile(join(this.root, id, 'seccomp.bpf')).catch(() => null);
  }

  private stateFile(id: string): string {
    return join(this.root, id, STATE_FILE[this.name].file);
  }

  private argv(...args: string[]): string[] {
    return ['--root', this.root, ...args];
  }

  private call(...args: string[]): Promise<string> {
    return runCommand(this.name, this.argv(...args));
  }
}
