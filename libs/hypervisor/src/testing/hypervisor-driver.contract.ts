import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import {
  MachineNotFoundError,
  type ExecChunk,
  type ExecSpec,
  type HypervisorDriver,
  type MachineSpec,
} from '../hypervisor-driver.port';

/** What one exec produced: the chunks as delivered, and each stream's bytes joined. */
export interface CollectedExec {
  exit_code: number;
  chunks: ExecChunk[];
  stdout: Buffer;
  stderr: Buffer;
}

export async function execCollect(
  driver: HypervisorDriver,
  vmId: string,
  spec: ExecSpec,
  onChunk?: (chunk: ExecChunk) => void,
): Promise<CollectedExec> {
  const chunks: ExecChunk[] = [];
  const { exit_code } = await driver.exec(vmId, spec, (chunk) => {
    chunks.push(chunk);
    onChunk?.(chunk);
  });
  const joined = (stream: ExecChunk['stream']) => Buffer.concat(chunks.filter((c) => c.stream === stream).map((c) => c.data));
  return { exit_code, chunks, stdout: joined('stdout'), stderr: joined('stderr') };
}

async function stdoutOf(driver: HypervisorDriver, vmId: string, spec: ExecSpec): Promise<string> {
  const result = await execCollect(driver, vmId, spec);
  if (result.exit_code !== 0) {
    throw new Error(`${spec.argv.join(' ')} exited ${result.exit_code}: ${result.stderr.toString()}`);
  }
  return result.stdout.toString();
}

/** Polls `read` until `accept` holds; fails with the last value after `attempts` tries. */
async function eventually<T>(read: () => Promise<T>, accept: (value: T) => boolean, attempts = 100): Promise<T> {
  let value = await read();
  for (let attempt = 1; attempt < attempts && !accept(value); attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    value = await read();
  }
  if (!accept(value)) throw new Error(`condition not reached; last value: ${JSON.stringify(value)}`);
  return value;
}

/** The `comm` and start time of a process from a /proc/<pid>/stat line (the rest changes as it runs). */
function commAndStartTime(stat: string): string {
  const comm = stat.slice(stat.indexOf('('), stat.lastIndexOf(')') + 1);
  const startTime = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  return `${comm} ${startTime}`;
}

export function machineSpec(overrides: Partial<MachineSpec> = {}): MachineSpec {
  return {
    vm_id: randomUUID(),
    vcpu_count: 1,
    mem_size_mib: 256,
    fs_size_mib: 1024,
    image_name: 'default',
    env: {},
    ...overrides,
  };
}

/**
 * The behaviour every hypervisor driver must show, run against a real driver on this host. Machine
 * creation may take seconds (QEMU under TCG), so the suite creates two machines once and runs every
 * check against them; the tests run in order and the last ones destroy machine B.
 *
 * Exec environment (fixed here for all drivers): PATH and HOME defaults, then the machine's
 * /etc/environment, then ExecSpec.env; nothing of the host's environment.
 */
export function describeHypervisorDriverContract(driverName: string, open: () => Promise<HypervisorDriver>): void {
  describe(`HypervisorDriver contract: ${driverName}`, () => {
    let driver: HypervisorDriver;
    const a = machineSpec({ env: { ARBOR_ZED: 'last', ARBOR_ALPHA: 'first', ARBOR_MIDDLE: 'with spaces' } });
    const b = machineSpec({ vcpu_count: 2, mem_size_mib: 512 });
    const created: string[] = [];

    beforeAll(async () => {
      driver = await open();
      await driver.prepare();
      for (const spec of [a, b]) {
        const info = await driver.create(spec);
        created.push(spec.vm_id);
        expect(info).toMatchObject({ vm_id: spec.vm_id, state: 'running' });
      }
    }, 15 * 60_000);

    afterAll(async () => {
      if (!driver) return;
      for (const vmId of created) await driver.destroy(vmId);
    }, 5 * 60_000);

    describe('lifecycle', () => {
      it('reports created machines as running and lists them', async () => {
        expect(await driver.status(a.vm_id)).toBe('running');
        expect(await driver.status(b.vm_id)).toBe('running');
        const listed = await driver.list();
        expect(listed).toEqual(
          expect.arrayContaining([
            expect.objectContaining({ vm_id: a.vm_id, state: 'running' }),
            expect.objectContaining({ vm_id: b.vm_id, state: 'running' }),
          ]),
        );
      });

      it('reports an unknown machine as null and rejects exec on it with MachineNotFoundError', async () => {
        const unknown = randomUUID();
        expect(await driver.status(unknown)).toBeNull();
        expect((await driver.list()).map((m) => m.vm_id)).not.toContain(unknown);
        await expect(driver.exec(unknown, { argv: ['true'] }, () => undefined)).rejects.toBeInstanceOf(
          MachineNotFoundError,
        );
      });

      it('refuses to create a machine whose vm_id exists, leaving the existing one untouched', async () => {
        await expect(driver.create({ ...a, env: { OTHER: '1' } })).rejects.toThrow();
        expect(await driver.status(a.vm_id)).toBe('running');
        expect(await stdoutOf(driver, a.vm_id, { argv: ['cat', '/etc/environment'] })).toContain('ARBOR_ALPHA=first');
      });
    });

    describe('exec', () => {
      it('returns exit codes', async () => {
        expect((await execCollect(driver, a.vm_id, { argv: ['true'] })).exit_code).toBe(0);
        expect((await execCollect(driver, a.vm_id, { argv: ['sh', '-c', 'exit 3'] })).exit_code).toBe(3);
        expect((await execCollect(driver, a.vm_id, { argv: ['false'] })).exit_code).toBe(1);
      });

      it('delivers stdout and stderr chunks in order while the process runs', async () => {
        // Each step waits for a file that the test creates only after it has seen the previous
        // chunk: this completes only if chunks arrive while the process is still running.
        const dir = `/tmp/steps-${randomUUID()}`;
        const script = [
          `mkdir -p ${dir}`,
          'echo one',
          `while [ ! -e ${dir}/1 ]; do sleep 0.05; done`,
          'echo two >&2',
          `while [ ! -e ${dir}/2 ]; do sleep 0.05; done`,
          'echo three',
        ].join('; ');
        const seen: string[] = [];
        const releases: Promise<unknown>[] = [];
        const result = await execCollect(driver, a.vm_id, { argv: ['sh', '-c', script], timeout_secs: 60 }, (chunk) => {
          seen.push(`${chunk.stream}:${chunk.data.toString().trim()}`);
          const step = { 'stdout:one': 1, 'stderr:two': 2 }[seen[seen.length - 1]];
          if (step) releases.push(stdoutOf(driver, a.vm_id, { argv: ['touch', `${dir}/${step}`] }));
        });
        await Promise.all(releases);
        expect(result.exit_code).toBe(0);
        expect(seen).toEqual(['stdout:one', 'stderr:two', 'stdout:three']);
      });

      it('runs argv without a shell', async () => {
        const out = await stdoutOf(driver, a.vm_id, { argv: ['echo', '$HOME', '*', 'a;b', '"q"', '$(id)'] });
        expect(out).toBe('$HOME * a;b "q" $(id)\n');
      });

      it('sets the environment: defaults, then the machine env, then the exec env; nothing from the host', async () => {
        process.env.ARBOR_CONTRACT_HOST_ONLY = 'must-not-leak';
        try {
          const env = { ARBOR_ZED: 'overridden', GREETING: 'hello world' };
          const out = await stdoutOf(driver, a.vm_id, {
            argv: ['sh', '-c', 'echo "$GREETING|$ARBOR_ZED|$ARBOR_ALPHA|${ARBOR_CONTRACT_HOST_ONLY-unset}"; command -v ls'],
            env,
          });
          expect(out).toBe('hello world|overridden|first|unset\n/usr/bin/ls\n');
        } finally {
          delete process.env.ARBOR_CONTRACT_HOST_ONLY;
        }
      });

      it('runs in working_dir', async () => {
        expect(await stdoutOf(driver, a.vm_id, { argv: ['pwd'], working_dir: '/etc' })).toBe('/etc\n');
        expect(await stdoutOf(driver, a.vm_id, { argv: ['ls', 'hostname'], working_dir: '/etc' })).toBe('hostname\n');
      });

      it('feeds stdin and closes it; without stdin the process reads end of file', async () => {
        const text = 'line one\nline two: ünïcödé ✓\n';
        expect(await stdoutOf(driver, a.vm_id, { argv: ['cat'], stdin: text })).toBe(text);
        expect(await stdoutOf(driver, a.vm_id, { argv: ['wc', '-c'] })).toBe('0\n');
      });

      it('kills the process and everything it started on timeout, with exit code 124', async () => {
        const pids = `/tmp/timeout-${randomUUID()}.pids`;
        const result = await execCollect(driver, a.vm_id, {
          argv: ['sh', '-c', `sleep 300 & echo $! > ${pids}; echo $$ >> ${pids}; wait`],
          timeout_secs: 1,
        });
        expect(result.exit_code).toBe(124);
        const check = [
          `[ -s ${pids} ] || { echo no-pids; exit 0; }`,
          'for i in $(seq 100); do',
          `  alive=; for p in $(cat ${pids}); do [ -e /proc/$p ] && alive="$alive $p"; done`,
          '  [ -z "$alive" ] && { echo gone; exit 0; }; sleep 0.1',
          'done; echo "alive:$alive"',
        ].join('\n');
        expect(await stdoutOf(driver, a.vm_id, { argv: ['sh', '-c', check] })).toBe('gone\n');
      });

      it('passes output through byte for byte', async () => {
        const allBytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
        const format = Array.from(allBytes, (byte) => `\\${byte.toString(8).padStart(3, '0')}`).join('');
        expect((await execCollect(driver, a.vm_id, { argv: ['printf', format] })).stdout).toEqual(allBytes);

        const blob = `/tmp/blob-${randomUUID()}`;
        const sum = await stdoutOf(driver, a.vm_id, {
          argv: ['sh', '-c', `head -c 1048576 /dev/urandom > ${blob}; sha256sum ${blob}`],
        });
        const received = (await execCollect(driver, a.vm_id, { argv: ['cat', blob] })).stdout;
        expect(received.length).toBe(1048576);
        expect(createHash('sha256').update(received).digest('hex')).toBe(sum.split(' ')[0]);
      });
    });

    describe('isolation', () => {
      it('gives each machine its own hostname', async () => {
        const nameA = (await stdoutOf(driver, a.vm_id, { argv: ['uname', '-n'] })).trim();
        const nameB = (await stdoutOf(driver, b.vm_id, { argv: ['uname', '-n'] })).trim();
        expect(nameA).not.toBe('');
        expect(nameA).not.toBe(hostname());
        expect(nameA).not.toBe(nameB);
        expect((await stdoutOf(driver, a.vm_id, { argv: ['cat', '/etc/hostname'] })).trim()).toBe(nameA);
      });

      it("gives each machine its own PID namespace whose PID 1 is the machine's init", async () => {
        const shellPid = Number((await stdoutOf(driver, a.vm_id, { argv: ['sh', '-c', 'echo $$'] })).trim());
        expect(shellPid).toBeGreaterThan(1);
        const machineInit = await stdoutOf(driver, a.vm_id, { argv: ['cat', '/proc/1/stat'] });
        expect(commAndStartTime(machineInit)).not.toBe(commAndStartTime(readFileSync('/proc/1/stat', 'utf8')));
        // The host's processes (this test runner among them) are invisible inside the machine.
        const hostCmdline = readFileSync(`/proc/${process.pid}/cmdline`);
        const seen = await execCollect(driver, a.vm_id, { argv: ['cat', `/proc/${process.pid}/cmdline`] });
        expect(seen.exit_code !== 0 || !seen.stdout.equals(hostCmdline)).toBe(true);
      });

      it('keeps files written in one machine out of the others and out of the base image', async () => {
        const file = `/root/only-in-a-${randomUUID()}`;
        await stdoutOf(driver, a.vm_id, { argv: ['sh', '-c', `echo secret > ${file}`] });
        expect(await stdoutOf(driver, a.vm_id, { argv: ['cat', file] })).toBe('secret\n');
        // B was created from the same base image: had A written through to the base, B would see it.
        expect((await execCollect(driver, b.vm_id, { argv: ['test', '-e', file] })).exit_code).toBe(1);
      });

      it("writes the spec's env into /etc/environment as sorted KEY=VALUE lines", async () => {
        const lines = (await stdoutOf(driver, a.vm_id, { argv: ['cat', '/etc/environment'] })).trimEnd().split('\n');
        expect(lines).toEqual(['ARBOR_ALPHA=first', 'ARBOR_MIDDLE=with spaces', 'ARBOR_ZED=last']);
      });
    });

    describe('pause and resume', () => {
      it('stops execution while paused and continues after resume', async () => {
        const counter = `/tmp/counter-${randomUUID()}`;
        const loop = `i=0; while :; do i=$((i+1)); echo $i > ${counter}.tmp; mv ${counter}.tmp ${counter}; sleep 0.1; done`;
        await stdoutOf(driver, b.vm_id, {
          argv: ['sh', '-c', `(${loop}) </dev/null >/dev/null 2>&1 & echo $! > ${counter}.pid`],
        });
        const readCounter = async () =>
          Number((await stdoutOf(driver, b.vm_id, { argv: ['sh', '-c', `cat ${counter} 2>/dev/null || echo 0`] })).trim());
        await eventually(readCounter, (n) => n >= 2);

        // The counter ticks at most once per 0.1 s of running time (+1 for the sleep pending at the
        // freeze, +1 for rounding), so across a pause of `paused` ms it can advance only by what
        // the unpaused part of the window allows.
        const windowStart = Date.now();
        const before = await readCounter();
        await driver.pause(b.vm_id);
        const pausedAt = Date.now();
        expect(await driver.status(b.vm_id)).toBe('paused');
        expect((await driver.list()).find((m) => m.vm_id === b.vm_id)?.state).toBe('paused');
        await new Promise((resolve) => setTimeout(resolve, 2000));
        const paused = Date.now() - pausedAt;
        await driver.resume(b.vm_id);
        const after = await readCounter();
        const running = Date.now() - windowStart - paused;
        expect(after - before).toBeLessThanOrEqual(Math.floor(running / 100) + 2);

        expect(await driver.status(b.vm_id)).toBe('running');
        await eventually(readCounter, (n) => n > after);
        await stdoutOf(driver, b.vm_id, { argv: ['sh', '-c', `kill $(cat ${counter}.pid)`] });
      });
    });

    describe('destroy', () => {
      it('removes the machine, and destroying it again succeeds', async () => {
        await driver.destroy(b.vm_id);
        expect(await driver.status(b.vm_id)).toBeNull();
        expect((await driver.list()).map((m) => m.vm_id)).not.toContain(b.vm_id);
        await expect(driver.exec(b.vm_id, { argv: ['true'] }, () => undefined)).rejects.toBeInstanceOf(
          MachineNotFoundError,
        );
        await driver.destroy(b.vm_id);
        expect(await driver.status(b.vm_id)).toBeNull();
        expect(await driver.status(a.vm_id)).toBe('running');
      });
    });
  });
}
