import { join } from 'node:path';
import { EXEC_OUTPUT_LIMIT_EXIT_CODE, execOutputLimitNote } from '@arbor/domain';
import { ESCAPE_ATTACKS, type EscapeTarget, makeHostSecret } from '@arbor/hypervisor/testing';
import { startTestArbor, type TestArbor } from '../test/support/arbor-harness';
import { printFigures } from './support/figures';

/** The exec output cap the service runs with (ARBOR_EXEC_OUTPUT_MAX_BYTES): small, so `yes` meets it in moments. */
const OUTPUT_CAP = 1024 * 1024;
/** `yes`'s timeout: far longer than it takes to reach the cap, so only the cap can end it in time. */
const ENDLESS_OUTPUT_TIMEOUT_SECS = 600;

/**
 * From inside a VM, through the public API only (`POST /vm/{id}/exec`, `GET /vm/{id}/files`), each
 * attack of issue 13 in a harmless form: the attacks the driver's escape contract makes through the
 * driver (ESCAPE_ATTACKS: host devices, mount, sysctls and core_pattern, sysrq, the kernel log,
 * cgroups, host paths, ptrace, setuid), and the bounds a tenant meets at the API: a giant file read
 * and endless output. Sandbox driver: its machines share the host's kernel, so every attack applies.
 */
describe('trust: escape attempts from a VM through the public API', () => {
  let arbor: TestArbor;
  let vm: string;
  // Made when the suite runs (a filtered-out suite runs no afterAll to remove it).
  let hostSecret: ReturnType<typeof makeHostSecret> | undefined;
  const tally = { tried: 0, blocked: 0 };
  let endlessOutput: Record<string, number> = {};
  const target: EscapeTarget = {
    async run(argv) {
      const answer = await arbor.request('POST', `/api/v1/vm/${vm}/exec`, { body: { command: argv, timeout_secs: 60 } });
      if (answer.status !== 200) throw new Error(`exec ${JSON.stringify(argv)} answered ${answer.status}: ${answer.text}`);
      return { exit: answer.json.exit_code, out: answer.json.stdout, err: String(answer.json.stderr).trim() };
    },
    get hostSecret() {
      return hostSecret!;
    },
    hostPathOf: (guestPath) => join(arbor.config.dataDir, 'machines', 'sandbox', vm, 'disk/upper', guestPath),
  };
  /** Runs one attack, counting it as blocked only when every one of its checks held. */
  const attempt = async (attack: () => Promise<void>) => {
    tally.tried++;
    await attack();
    tally.blocked++;
  };

  beforeAll(async () => {
    hostSecret = makeHostSecret();
    arbor = await startTestArbor({ env: { HYPERVISOR: 'sandbox', ARBOR_EXEC_OUTPUT_MAX_BYTES: String(OUTPUT_CAP) } });
    vm = await arbor.bootVm({ mem_size_mib: 256 });
  }, 300_000);
  afterAll(async () => {
    printFigures('escape', { 'escapes blocked': tally.blocked, tried: tally.tried, 'got through': tally.tried - tally.blocked, ...endlessOutput });
    hostSecret?.remove();
    await arbor?.destroy();
  }, 300_000);

  for (const attack of ESCAPE_ATTACKS.filter((a) => a.boundaries.includes('shared-kernel'))) {
    it(attack.name, () => attempt(() => attack.attempt(target)), 120_000);
  }

  it('reads no giant file through GET /files: a sparse 1 TiB file and /dev/zero are refused, not read', () =>
    attempt(async () => {
      expect((await target.run(['truncate', '-s', '1T', '/root/huge'])).exit).toBe(0);
      const huge = await arbor.request('GET', `/api/v1/vm/${vm}/files?path=/root/huge`);
      expect(huge.status).toBe(413);
      const zero = await arbor.request('GET', `/api/v1/vm/${vm}/files?path=/dev/zero`);
      // A device is no regular file (400), or, read as one, is cut at the cap (413).
      expect([400, 413]).toContain(zero.status);
      // The worker is still there for the next request.
      expect((await target.run(['true'])).exit).toBe(0);
    }),
  );

  it('ends endless output at the output cap: `yes` through sync exec answers the cap, its note and 137, and the VM serves the next exec', () =>
    attempt(async () => {
      const started = Date.now();
      const answer = await arbor.request('POST', `/api/v1/vm/${vm}/exec`, { body: { command: ['yes'], timeout_secs: ENDLESS_OUTPUT_TIMEOUT_SECS } });
      endlessOutput = { 'endless output: bytes answered': answer.text.length, 'endless output: ms': Date.now() - started };
      // Ended by the cap, as it defines (not by its timeout, which would answer 124): exactly the
      // cap's bytes kept, the note on stderr, killed.
      expect(answer.status).toBe(200);
      expect({ exit_code: answer.json.exit_code, stdout_bytes: answer.json.stdout.length, stderr: answer.json.stderr }).toEqual({
        exit_code: EXEC_OUTPUT_LIMIT_EXIT_CODE,
        stdout_bytes: OUTPUT_CAP,
        stderr: execOutputLimitNote(OUTPUT_CAP),
      });
      expect(answer.json.stdout).toBe('y\n'.repeat(OUTPUT_CAP / 2));
      expect((await target.run(['true'])).exit).toBe(0);
    }),
    ENDLESS_OUTPUT_TIMEOUT_SECS * 1000,
  );
});
