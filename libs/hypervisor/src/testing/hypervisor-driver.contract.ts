import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import {
  GuestFileError,
  MachineNotFoundError,
  MachineStateError,
  SnapshotNotFoundError,
  type HypervisorDriver,
  type MachineSpec,
  type SnapshotInfo,
  type SnapshotMachineSpec,
} from '../hypervisor-driver.port';
import { sleep } from '../host/sleep';
import {
  eventually,
  execCollect,
  existing,
  identityOf,
  processesWithMarker,
  rootFsSizeMib,
  startRunWitness,
  stdoutOf,
  type GuestIdentity,
} from './guest-probes';
import { machineSpec, snapshotMachineSpec } from './machine-specs';

export { execCollect, type CollectedExec } from './guest-probes';
export { machineSpec, snapshotMachineSpec, openSshPublicKey } from './machine-specs';

/** The `comm` and start time of a process from a /proc/<pid>/stat line (the rest changes as it runs). */
function commAndStartTime(stat: string): string {
  const comm = stat.slice(stat.indexOf('('), stat.lastIndexOf(')') + 1);
  const startTime = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  return `${comm} ${startTime}`;
}

/** KEY=VALUE lines sorted by key: what /etc/environment must hold. */
function environmentFileOf(env: Record<string, string>): string {
  return Object.keys(env)
    .sort()
    .map((key) => `${key}=${env[key]}\n`)
    .join('');
}

/** How far a new machine's clock may be from the host's (the guest rounds, the exec takes time). */
const CLOCK_TOLERANCE_SECS = 3;

/**
 * The machine is who its spec says, with a well-formed machine id and SSH host key of its own,
 * and its clock on the host's time (a machine restored from memory would otherwise run at the
 * time of its snapshot).
 */
function expectIdentityOf(identity: GuestIdentity, spec: Pick<MachineSpec, 'env' | 'identity'>): void {
  expect(identity.clockSkewSecs).toBeLessThanOrEqual(CLOCK_TOLERANCE_SECS);
  expect(identity.unameHostname).toBe(spec.identity.hostname);
  expect(identity.etcHostname).toBe(spec.identity.hostname);
  expect(identity.machineId).toMatch(/^[0-9a-f]{32}$/);
  expect(identity.hostKeyFirstLine).toBe('-----BEGIN OPENSSH PRIVATE KEY-----');
  expect(identity.hostKeyMode).toBe('600');
  expect(identity.hostKeyPub).toMatch(/^ssh-ed25519 AAAA[0-9A-Za-z+/=]+( .*)?$/);
  expect(identity.authorizedKeys.split('\n')).toContain(spec.identity.ssh_authorized_key);
  expect(identity.environment).toBe(environmentFileOf(spec.env));
}

/** No two machines share a machine id or an SSH host key. */
function expectDistinct(identities: GuestIdentity[]): void {
  expect(new Set(identities.map((i) => i.machineId)).size).toBe(identities.length);
  expect(new Set(identities.map((i) => i.hostKeyPub.split(' ')[1])).size).toBe(identities.length);
}

/** What only the driver's own spec knows how to check on the host. */
export interface DriverContractHooks {
  /**
   * Notes what the machine holds on the host now (processes, mounts, cgroups, files); the returned
   * check asserts that every piece of it is gone (after destroy).
   */
  footprint(vmId: string): Promise<() => Promise<void>>;
  /** Asserts that the machine has the vCPUs and memory of its spec, in the driver's own terms. */
  expectShape(driver: HypervisorDriver, vmId: string, spec: MachineSpec): Promise<void>;
}

/**
 * The behaviour every hypervisor driver must show, run against a real driver on this host. Machine
 * creation may take seconds (QEMU under TCG), so the suite creates two machines once and runs most
 * checks against them; the snapshot checks start four more (one from a commit, two branch children,
 * one from a commit of a child) and group their assertions. Tests run in order and share state:
 * a failure early in "snapshots" fails the later ones too. A branch is made as the worker makes
 * one: a commit, then each child started from that snapshot.
 *
 * Memory snapshots are checked where the driver has them (capabilities.memory_snapshots): then a
 * process started before a commit runs on in the new machines with its PID and memory; without
 * them the new machines must boot fresh, with no such process.
 *
 * Exec environment (fixed here for all drivers): PATH and HOME defaults, then the machine's
 * /etc/environment, then ExecSpec.env; nothing of the host's environment.
 */
export function describeHypervisorDriverContract(
  driverName: string,
  open: () => Promise<HypervisorDriver>,
  hooks: DriverContractHooks,
): void {
  describe(`HypervisorDriver contract: ${driverName}`, () => {
    let driver: HypervisorDriver;
    const a = machineSpec({ env: { ARBOR_ZED: 'last', ARBOR_ALPHA: 'first', ARBOR_MIDDLE: 'with spaces' } });
    const b = machineSpec({ vcpu_count: 2, mem_size_mib: 512 });
    // Started from snapshots (see "snapshots"); c2 also dies in "destroy".
    const m1 = snapshotMachineSpec({ env: { FROM: 'snapshot-one' } });
    const c1 = snapshotMachineSpec({ env: { CHILD: '1' } });
    const c2 = snapshotMachineSpec({ env: { CHILD: '2' } });
    const d1 = snapshotMachineSpec();
    const created: string[] = [];
    const snapshotIds: string[] = [];

    /**
     * Pauses the machine for about 5 s (running `during` half-way) and asserts that it ran in none
     * of those seconds, then that it runs again after resume. A VM's RTC may be up to a second off
     * the host either way (it starts behind by the fraction of a second QEMU started at; setting
     * the guest clock writes it with `hwclock`, which sets the next second half a second early),
     * so the first and last second next to the window are not judged.
     */
    async function expectNoRunWhilePaused(vmId: string, during?: () => Promise<void>): Promise<void> {
      const witness = await startRunWitness(driver, vmId);
      try {
        await driver.pause(vmId);
        const pausedAt = Math.floor(Date.now() / 1000);
        await sleep(2500);
        await during?.();
        await sleep(2500);
        const resumingAt = Math.floor(Date.now() / 1000);
        await driver.resume(vmId);
        const seen = await eventually(witness.secondsSeen, (seconds) => seconds.some((second) => second >= resumingAt - 1));
        expect(seen.filter((second) => second > pausedAt + 1 && second < resumingAt - 1)).toEqual([]);
      } finally {
        if ((await driver.status(vmId)) === 'paused') await driver.resume(vmId);
        await witness.stop();
      }
    }

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
      for (const id of snapshotIds) await driver.deleteSnapshot(id).catch(() => undefined);
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

      it('delivers stdout and stderr in the order the process wrote them, even within one burst', async () => {
        const result = await execCollect(driver, a.vm_id, {
          argv: ['sh', '-c', 'for i in 1 2 3 4 5; do echo o$i; echo e$i >&2; done'],
        });
        expect(result.exit_code).toBe(0);
        const lines = result.chunks.flatMap((chunk) =>
          chunk.data.toString().split('\n').filter(Boolean).map((line) => `${chunk.stream}:${line}`),
        );
        expect(lines).toEqual([1, 2, 3, 4, 5].flatMap((i) => [`stdout:o${i}`, `stderr:e${i}`]));
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
      it('gives each machine the identity of its spec: hostname, machine id, SSH keys, /etc/environment', async () => {
        const [identityA, identityB] = [await identityOf(driver, a.vm_id), await identityOf(driver, b.vm_id)];
        expectIdentityOf(identityA, a);
        expectIdentityOf(identityB, b);
        expect(identityA.unameHostname).not.toBe(hostname());
        expectDistinct([identityA, identityB]);
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

    describe('shape', () => {
      it('gives each machine the vCPUs and memory of its spec', async () => {
        await hooks.expectShape(driver, a.vm_id, a);
        await hooks.expectShape(driver, b.vm_id, b);
      }, 120_000);
    });

    describe('files', () => {
      it('writes and reads back binary content, replacing an existing file', async () => {
        const path = `/root/blob-${randomUUID()}.bin`;
        const content = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), randomBytes(64 * 1024)]);
        await driver.writeFile(a.vm_id, path, content);
        expect((await driver.readFile(a.vm_id, path)).equals(content)).toBe(true);
        // The guest sees the same bytes (not only the driver's own read path).
        const sum = (await stdoutOf(driver, a.vm_id, { argv: ['sha256sum', path] })).split(' ')[0];
        expect(sum).toBe(createHash('sha256').update(content).digest('hex'));
        await driver.writeFile(a.vm_id, path, Buffer.from('short'));
        expect((await driver.readFile(a.vm_id, path)).toString()).toBe('short');
      });

      it('applies the mode (default 644)', async () => {
        const secret = `/root/secret-${randomUUID()}`;
        const plain = `/root/plain-${randomUUID()}`;
        await driver.writeFile(a.vm_id, secret, Buffer.from('s'), { mode: 0o600 });
        await driver.writeFile(a.vm_id, plain, Buffer.from('p'));
        expect(await stdoutOf(driver, a.vm_id, { argv: ['stat', '-c', '%a', secret, plain] })).toBe('600\n644\n');
      });

      it('creates parent directories only with create_dirs; otherwise a missing parent is parent_missing', async () => {
        const dir = `/root/nested-${randomUUID()}`;
        const error = await driver.writeFile(a.vm_id, `${dir}/x/file`, Buffer.from('no')).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(GuestFileError);
        expect(error).toMatchObject({ reason: 'parent_missing' });
        expect(await existing(driver, a.vm_id, [dir])).toEqual([]);
        await driver.writeFile(a.vm_id, `${dir}/x/file`, Buffer.from('yes'), { create_dirs: true });
        expect(await stdoutOf(driver, a.vm_id, { argv: ['cat', `${dir}/x/file`] })).toBe('yes');
      });

      it('reports a missing file as not_found and a directory as not_a_file', async () => {
        const missing = await driver.readFile(a.vm_id, `/root/missing-${randomUUID()}`).catch((e: unknown) => e);
        expect(missing).toBeInstanceOf(GuestFileError);
        expect(missing).toMatchObject({ reason: 'not_found' });
        const directory = await driver.readFile(a.vm_id, '/etc').catch((e: unknown) => e);
        expect(directory).toBeInstanceOf(GuestFileError);
        expect(directory).toMatchObject({ reason: 'not_a_file' });
      });

      it('rejects file operations on an unknown machine with MachineNotFoundError', async () => {
        const unknown = randomUUID();
        await expect(driver.readFile(unknown, '/etc/hostname')).rejects.toBeInstanceOf(MachineNotFoundError);
        await expect(driver.writeFile(unknown, '/tmp/x', Buffer.from('x'))).rejects.toBeInstanceOf(MachineNotFoundError);
      });
    });

    describe('pause and resume', () => {
      it('stops execution while paused and continues after resume', async () => {
        await expectNoRunWhilePaused(b.vm_id, async () => {
          expect(await driver.status(b.vm_id)).toBe('paused');
          expect((await driver.list()).find((m) => m.vm_id === b.vm_id)?.state).toBe('paused');
        });
        expect(await driver.status(b.vm_id)).toBe('running');
      }, 120_000);

      it('commits a paused machine without running it, again and again, and leaves it paused', async () => {
        // Several commits: a driver that lets the guest run for a moment in each would be caught
        // by the witness in one of them.
        const ids = Array.from({ length: 8 }, (_, i) => `paused-${i}-${randomUUID()}`);
        await expectNoRunWhilePaused(b.vm_id, async () => {
          for (const id of ids) {
            const info = await driver.commit(b.vm_id, id);
            snapshotIds.push(id);
            expect(info).toMatchObject({ snapshot_id: id, source_vm_id: b.vm_id, vcpu_count: b.vcpu_count });
            expect(await driver.status(b.vm_id)).toBe('paused');
          }
        });
        expect(await driver.status(b.vm_id)).toBe('running');
        expect((await driver.readFile(b.vm_id, '/etc/hostname')).toString()).toBe(`${b.identity.hostname}\n`);
      }, 5 * 60_000);

      it('applies a pause that races a commit after it: the machine ends up paused, then resumes', async () => {
        const id = `raced-${randomUUID()}`;
        const [info] = await Promise.all([driver.commit(b.vm_id, id), driver.pause(b.vm_id)]);
        snapshotIds.push(id);
        expect(info.snapshot_id).toBe(id);
        expect(await driver.status(b.vm_id)).toBe('paused');
        await driver.resume(b.vm_id);
        expect(await stdoutOf(driver, b.vm_id, { argv: ['echo', 'running'] })).toBe('running\n');
      }, 120_000);

      it('rejects exec and file operations on a paused machine with MachineStateError, without hanging', async () => {
        await driver.pause(b.vm_id);
        try {
          await expect(driver.exec(b.vm_id, { argv: ['true'] }, () => undefined)).rejects.toBeInstanceOf(MachineStateError);
          await expect(driver.readFile(b.vm_id, '/etc/hostname')).rejects.toBeInstanceOf(MachineStateError);
          await expect(driver.writeFile(b.vm_id, '/tmp/x', Buffer.from('x'))).rejects.toBeInstanceOf(MachineStateError);
          expect(await driver.status(b.vm_id)).toBe('paused');
        } finally {
          await driver.resume(b.vm_id);
        }
        expect((await driver.readFile(b.vm_id, '/etc/hostname')).toString()).toBe(`${b.identity.hostname}\n`);
      });
    });

    describe('snapshots', () => {
      // Shared by the tests below, which build on each other in order.
      const slow = 10 * 60_000;
      const marker = `arbor-counter-${randomUUID()}`;
      // Not named after the marker: the loop's `mv` of this file would match it while it runs.
      const counterFile = `/root/counter-${randomUUID()}`;
      const s1 = `s1-${randomUUID()}`;
      const s2 = `s2-${randomUUID()}`;
      const s3 = `s3-${randomUUID()}`;
      let counterPid: number;
      let identityA: GuestIdentity;

      const readCounter = async (vmId: string) =>
        Number((await stdoutOf(driver, vmId, { argv: ['sh', '-c', `cat ${counterFile} 2>/dev/null || echo 0`] })).trim());

      /**
       * The counter started in A before the commits: with memory snapshots it runs on in the new
       * machine (same PID, counting on from its in-memory value); without, the machine booted fresh.
       */
      async function expectCounterProcessPerCapability(vmId: string, countedBeforeCommit: number): Promise<void> {
        const pids = await processesWithMarker(driver, vmId, marker);
        if (driver.capabilities.memory_snapshots) {
          expect(pids).toEqual([counterPid]);
          const first = await readCounter(vmId);
          expect(first).toBeGreaterThanOrEqual(countedBeforeCommit);
          await eventually(() => readCounter(vmId), (n) => n > first);
        } else {
          expect(pids).toEqual([]);
        }
      }

      async function startFrom(snapshotId: string, spec: SnapshotMachineSpec) {
        const info = await driver.startFromSnapshot(snapshotId, spec);
        created.push(spec.vm_id);
        return info;
      }

      it('commits the filesystem into an immutable snapshot while the source keeps running', async () => {
        await driver.writeFile(a.vm_id, '/root/gen1', Buffer.from('generation one'));
        await stdoutOf(driver, a.vm_id, {
          argv: ['sh', '-c', 'echo bye > /root/doomed; mkdir -p /root/dir; echo old > /root/dir/old'],
        });
        const loop = `i=0; while :; do i=$((i+1)); echo $i > ${counterFile}.tmp; mv ${counterFile}.tmp ${counterFile}; sleep 0.05; done`;
        await stdoutOf(driver, a.vm_id, {
          argv: ['sh', '-c', `sh -c "$1" "$2" </dev/null >/dev/null 2>&1 & echo $! > ${counterFile}.pid`, 'sh', loop, marker],
        });
        counterPid = Number((await stdoutOf(driver, a.vm_id, { argv: ['cat', `${counterFile}.pid`] })).trim());
        expect(await processesWithMarker(driver, a.vm_id, marker)).toEqual([counterPid]);
        await eventually(() => readCounter(a.vm_id), (n) => n >= 3);

        const info = await driver.commit(a.vm_id, s1);
        snapshotIds.push(s1);
        expect(info).toMatchObject({
          snapshot_id: s1,
          source_vm_id: a.vm_id,
          includes_memory: driver.capabilities.memory_snapshots,
          vcpu_count: a.vcpu_count,
          mem_size_mib: a.mem_size_mib,
          fs_size_mib: a.fs_size_mib,
        });
        expect(Number.isNaN(Date.parse(info.created_at))).toBe(false);
        expect(await driver.status(a.vm_id)).toBe('running');
        const afterCommit = await readCounter(a.vm_id);
        await eventually(() => readCounter(a.vm_id), (n) => n > afterCommit);

        // Written after the commit: must never show in machines started from s1.
        await driver.writeFile(a.vm_id, '/root/after-s1', Buffer.from('later'));
        expect(await driver.getSnapshot(s1)).toEqual(info);
        expect(await driver.listSnapshots()).toEqual(expect.arrayContaining([info]));
        expect(await driver.getSnapshot(`missing-${randomUUID()}`)).toBeNull();
      }, slow);

      it('refuses an existing snapshot id and reports unknown snapshots with SnapshotNotFoundError', async () => {
        await expect(driver.commit(a.vm_id, s1)).rejects.toThrow();
        await expect(driver.startFromSnapshot(`missing-${randomUUID()}`, snapshotMachineSpec())).rejects.toBeInstanceOf(
          SnapshotNotFoundError,
        );
        await expect(driver.commit(randomUUID(), `x-${randomUUID()}`)).rejects.toBeInstanceOf(MachineNotFoundError);
        expect(await driver.status(a.vm_id)).toBe('running');
      }, slow);

      it("starts a machine from a snapshot with the snapshot's files and shape and an identity of its own", async () => {
        const countedBeforeCommit = 3;
        const info = await startFrom(s1, m1);
        expect(info).toMatchObject({ vm_id: m1.vm_id, state: 'running' });
        expect(await driver.status(m1.vm_id)).toBe('running');
        expect((await driver.list()).map((m) => m.vm_id)).toContain(m1.vm_id);
        expect(await existing(driver, m1.vm_id, ['/root/gen1', '/root/doomed', '/root/dir/old', '/root/after-s1'])).toEqual([
          '/root/gen1',
          '/root/doomed',
          '/root/dir/old',
        ]);
        expect((await driver.readFile(m1.vm_id, '/root/gen1')).toString()).toBe('generation one');
        expect(await rootFsSizeMib(driver, m1.vm_id)).toBeLessThanOrEqual(a.fs_size_mib);

        identityA = await identityOf(driver, a.vm_id);
        const identityM1 = await identityOf(driver, m1.vm_id);
        expectIdentityOf(identityM1, m1);
        expectDistinct([identityA, identityM1]);
        await expectCounterProcessPerCapability(m1.vm_id, countedBeforeCommit);
      }, slow);

      it('branches a running machine into two children from one commit, leaving the source paused on request', async () => {
        const countedBeforeCommit = await readCounter(a.vm_id);
        const snapshot = await driver.commit(a.vm_id, s2, { keep_paused: true });
        snapshotIds.push(s2);
        const machines = [await startFrom(s2, c1), await startFrom(s2, c2)];
        expect(snapshot).toMatchObject({ snapshot_id: s2, source_vm_id: a.vm_id });
        expect(machines).toEqual([
          expect.objectContaining({ vm_id: c1.vm_id, state: 'running' }),
          expect.objectContaining({ vm_id: c2.vm_id, state: 'running' }),
        ]);

        expect(await driver.status(a.vm_id)).toBe('paused');
        await expect(driver.exec(a.vm_id, { argv: ['true'] }, () => undefined)).rejects.toBeInstanceOf(MachineStateError);
        await expect(driver.readFile(a.vm_id, '/root/gen1')).rejects.toBeInstanceOf(MachineStateError);
        await driver.resume(a.vm_id);
        expect(await driver.status(a.vm_id)).toBe('running');

        const identities = [identityA, await identityOf(driver, m1.vm_id)];
        for (const child of [c1, c2]) {
          expect(await driver.status(child.vm_id)).toBe('running');
          // after-s1 was written between the commits: in s2's children, not in s1's machine (above).
          expect(await existing(driver, child.vm_id, ['/root/gen1', '/root/doomed', '/root/after-s1'])).toEqual([
            '/root/gen1',
            '/root/doomed',
            '/root/after-s1',
          ]);
          const identity = await identityOf(driver, child.vm_id);
          expectIdentityOf(identity, child);
          identities.push(identity);
          await expectCounterProcessPerCapability(child.vm_id, countedBeforeCommit);
        }
        expectDistinct(identities);
      }, slow);

      it('lets machines started from one snapshot diverge from each other and from the source', async () => {
        await driver.writeFile(c1.vm_id, '/root/only-c1', Buffer.from('1'));
        await driver.writeFile(c2.vm_id, '/root/only-c2', Buffer.from('2'));
        await driver.writeFile(a.vm_id, '/root/only-a', Buffer.from('a'));
        const probe = ['/root/only-c1', '/root/only-c2', '/root/only-a'];
        expect(await existing(driver, c1.vm_id, probe)).toEqual(['/root/only-c1']);
        expect(await existing(driver, c2.vm_id, probe)).toEqual(['/root/only-c2']);
        expect(await existing(driver, a.vm_id, probe)).toEqual(['/root/only-a']);
        expect(await existing(driver, m1.vm_id, probe)).toEqual([]);
      }, slow);

      it('captures deletions and replaced directories, and keeps a snapshot after its source is destroyed', async () => {
        // c1's /root/doomed and /root/dir come from the layers it was started from.
        await stdoutOf(driver, c1.vm_id, {
          argv: ['sh', '-c', 'rm /root/doomed; rm -r /root/dir; mkdir /root/dir; echo new > /root/dir/new'],
        });
        await driver.commit(c1.vm_id, s3);
        snapshotIds.push(s3);
        await driver.destroy(c1.vm_id);
        expect(await driver.getSnapshot(s3)).toMatchObject({ snapshot_id: s3, source_vm_id: c1.vm_id });

        await startFrom(s3, d1);
        expect(await existing(driver, d1.vm_id, ['/root/gen1', '/root/after-s1', '/root/only-c1', '/root/doomed'])).toEqual([
          '/root/gen1',
          '/root/after-s1',
          '/root/only-c1',
        ]);
        expect(await stdoutOf(driver, d1.vm_id, { argv: ['ls', '-A', '/root/dir'] })).toBe('new\n');
        expectIdentityOf(await identityOf(driver, d1.vm_id), d1);
      }, slow);

      it('refuses to delete a snapshot while a machine started from it exists, and deletes it after', async () => {
        await expect(driver.deleteSnapshot(s3)).rejects.toThrow(d1.vm_id);
        expect(await driver.getSnapshot(s3)).not.toBeNull();
        await driver.destroy(d1.vm_id);
        await driver.deleteSnapshot(s3);
        expect(await driver.getSnapshot(s3)).toBeNull();
        expect((await driver.listSnapshots()).map((s: SnapshotInfo) => s.snapshot_id)).not.toContain(s3);
        await expect(driver.startFromSnapshot(s3, snapshotMachineSpec())).rejects.toBeInstanceOf(SnapshotNotFoundError);
        // The other snapshots are untouched.
        expect((await driver.listSnapshots()).map((s) => s.snapshot_id)).toEqual(expect.arrayContaining([s1, s2]));
      }, slow);
    });

    describe('disk', () => {
      it('grows the root filesystem visibly to df, and refuses to shrink it or keep its size', async () => {
        const before = await rootFsSizeMib(driver, a.vm_id);
        expect(before).toBeLessThanOrEqual(a.fs_size_mib);
        expect(before).toBeGreaterThanOrEqual(a.fs_size_mib * 0.75);
        await driver.resizeDisk(a.vm_id, a.fs_size_mib + 512);
        const after = await rootFsSizeMib(driver, a.vm_id);
        expect(after - before).toBeGreaterThanOrEqual(512 * 0.9);
        expect(after).toBeLessThanOrEqual(a.fs_size_mib + 512);
        await expect(driver.resizeDisk(a.vm_id, a.fs_size_mib + 512)).rejects.toThrow();
        await expect(driver.resizeDisk(a.vm_id, a.fs_size_mib)).rejects.toThrow();
        expect(await rootFsSizeMib(driver, a.vm_id)).toBe(after);
        expect(await driver.status(a.vm_id)).toBe('running');
      }, 10 * 60_000);

      it('grows the disk of a paused machine, which stays paused; df shows the new size once it runs again', async () => {
        const before = await rootFsSizeMib(driver, a.vm_id);
        const target = a.fs_size_mib + 768; // 256 MiB more than the test above left
        await driver.pause(a.vm_id);
        try {
          await driver.resizeDisk(a.vm_id, target);
          expect(await driver.status(a.vm_id)).toBe('paused');
          await expect(driver.resizeDisk(a.vm_id, target)).rejects.toThrow();
        } finally {
          await driver.resume(a.vm_id);
        }
        expect(await driver.status(a.vm_id)).toBe('running');
        const after = await rootFsSizeMib(driver, a.vm_id);
        expect(after - before).toBeGreaterThanOrEqual(256 * 0.9);
        expect(after).toBeLessThanOrEqual(target);
      }, 10 * 60_000);
    });

    describe('destroy', () => {
      it('removes the machine and everything it held on the host, and destroying it again succeeds', async () => {
        const gone = await hooks.footprint(b.vm_id);
        await driver.destroy(b.vm_id);
        await gone();
        expect(await driver.status(b.vm_id)).toBeNull();
        expect((await driver.list()).map((m) => m.vm_id)).not.toContain(b.vm_id);
        await expect(driver.exec(b.vm_id, { argv: ['true'] }, () => undefined)).rejects.toBeInstanceOf(
          MachineNotFoundError,
        );
        await driver.destroy(b.vm_id);
        expect(await driver.status(b.vm_id)).toBeNull();
        expect(await driver.status(a.vm_id)).toBe('running');
      }, 120_000);

      it('reports a machine whose host process was killed as dead, refuses to run in it, and destroys every trace of it', async () => {
        const pid = (await driver.list()).find((m) => m.vm_id === c2.vm_id)?.pid;
        expect(pid).toBeGreaterThan(1);
        const gone = await hooks.footprint(c2.vm_id);
        process.kill(pid!, 'SIGKILL');
        await eventually(() => driver.status(c2.vm_id), (state) => state === 'dead');
        expect((await driver.list()).find((m) => m.vm_id === c2.vm_id)?.state).toBe('dead');
        await expect(driver.exec(c2.vm_id, { argv: ['true'] }, () => undefined)).rejects.toBeInstanceOf(MachineStateError);
        await expect(driver.readFile(c2.vm_id, '/etc/hostname')).rejects.toBeInstanceOf(MachineStateError);
        await driver.destroy(c2.vm_id);
        expect(await driver.status(c2.vm_id)).toBeNull();
        expect((await driver.list()).map((m) => m.vm_id)).not.toContain(c2.vm_id);
        await gone();
        expect(await driver.status(a.vm_id)).toBe('running');
      }, 120_000);
    });
  });
}
