import { spawn, spawnSync } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecChunk } from './hypervisor-driver.port';
import { compileGuestHelper } from './kit/guest-helper-build';
import { OrderedOutputDecoder, orderedExecArgv, type OrderedExec } from './ordered-output';

const START_ENV = { PATH: '/usr/bin:/bin', HOME: '/root' };

/** The helper, built here for the host as the kit builds it for guests (static: the same binary runs in both). */
let helper: string;
const helperDir = mkdtempSync(join(tmpdir(), 'arbor-helper-'));
beforeAll(async () => {
  helper = join(helperDir, 'arbor-guest');
  await compileGuestHelper(helper);
}, 60_000);
afterAll(() => rmSync(helperDir, { recursive: true, force: true }));

/** The helper runs here on the host, exactly as the drivers run it in a guest. */
function run(
  argv: string[],
  stdin = '',
  options: Partial<OrderedExec> = {},
): Promise<{ code: number | null; chunks: ExecChunk[]; rawStderr: string }> {
  return new Promise((resolve, reject) => {
    const [command, ...args] = orderedExecArgv({ output: '-', workingDir: '/', environmentFile: '', env: {}, argv, helper, ...options });
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], env: START_ENV });
    const chunks: ExecChunk[] = [];
    const decoder = new OrderedOutputDecoder((chunk) => chunks.push(chunk));
    let rawStderr = '';
    child.stdout.on('data', (data: Buffer) => decoder.push(data));
    child.stderr.on('data', (data: Buffer) => (rawStderr += data.toString()));
    child.stdin.on('error', () => undefined); // the command may exit before reading its stdin
    child.stdin.end(stdin);
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, chunks, rawStderr }));
  });
}

/** Each line with the stream it came on, in the order delivered. */
const lines = (chunks: ExecChunk[]) =>
  chunks.flatMap((chunk) => chunk.data.toString().split('\n').filter(Boolean).map((line) => `${chunk.stream}:${line}`));

describe('ordered output', () => {
  it('keeps stdout and stderr in the order the command wrote them, every time', async () => {
    const script = 'for i in 1 2 3 4 5; do echo o$i; echo e$i >&2; done';
    const expected = [1, 2, 3, 4, 5].flatMap((i) => [`stdout:o${i}`, `stderr:e${i}`]);
    for (let round = 0; round < 10; round++) {
      const { code, chunks } = await run(['sh', '-c', script]);
      expect(code).toBe(0);
      expect(lines(chunks)).toEqual(expected);
    }
  });

  it('exits with the exit code of the command, 128 + the signal that killed it, 127 when it cannot start', async () => {
    expect((await run(['sh', '-c', 'exit 3'])).code).toBe(3);
    expect((await run(['sh', '-c', 'kill -9 $$'])).code).toBe(137);
    const missing = await run(['/nonexistent/command']);
    expect(missing.code).toBe(127);
    expect(lines(missing.chunks)).toEqual(['stderr:/nonexistent/command: No such file or directory']);
  });

  it('passes stdin through and large output byte for byte', async () => {
    expect(lines((await run(['cat'], 'fed\n')).chunks)).toEqual(['stdout:fed']);
    const dir = mkdtempSync(join(tmpdir(), 'arbor-ordered-'));
    try {
      const blob = Buffer.alloc(3 * 1024 * 1024 + 17, 0);
      for (let i = 0; i < blob.length; i++) blob[i] = (i * 7919) % 251;
      writeFileSync(join(dir, 'blob'), blob);
      const { code, chunks } = await run(['cat', join(dir, 'blob')]);
      expect(code).toBe(0);
      const received = Buffer.concat(chunks.map((chunk) => chunk.data));
      expect(createHash('sha256').update(received).digest('hex')).toBe(createHash('sha256').update(blob).digest('hex'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('sets the environment: the one it started with, then the environment file, then the pairs; and the working directory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'arbor-ordered-'));
    try {
      const file = join(dir, 'environment');
      writeFileSync(file, ['# comment', '', 'FROM_FILE=plain', '  QUOTED="with spaces"', "SINGLE='x'", 'OVERRIDDEN=file', 'not a pair'].join('\n'));
      const { code, chunks } = await run(['sh', '-c', 'env | sort; pwd'], '', {
        workingDir: dir,
        environmentFile: file,
        env: { OVERRIDDEN: 'pair' },
      });
      expect(code).toBe(0);
      const out = Buffer.concat(chunks.map((c) => c.data)).toString().split('\n');
      expect(out).toEqual(
        expect.arrayContaining(['FROM_FILE=plain', 'QUOTED=with spaces', 'SINGLE=x', 'OVERRIDDEN=pair', `PATH=${START_ENV.PATH}`, 'HOME=/root', dir]),
      );
      expect(out.filter((line) => line.startsWith('OVERRIDDEN='))).toEqual(['OVERRIDDEN=pair']);
      const missing = await run(['pwd'], '', { workingDir: join(dir, 'missing') });
      expect(missing.code).toBe(1);
      expect(lines(missing.chunks)).toEqual([`stderr:arbor-exec: cd ${join(dir, 'missing')}: No such file or directory`]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('does not wait for processes the command left running', async () => {
    // The subshell carries the marker in its command line (a fork of the `sh -c` script).
    const marker = `arbor-left-${randomUUID()}`;
    const { code, chunks } = await run(['sh', '-c', `(sleep 30; : ${marker}) & echo left`]);
    expect(code).toBe(0);
    expect(lines(chunks)).toEqual(['stdout:left']);
    try {
      // Answered while what it left behind still runs.
      expect(spawnSync('pgrep', ['-f', marker]).status).toBe(0);
    } finally {
      spawnSync('pkill', ['-f', marker]);
    }
  });

  it('kills the command and everything it started, orphans included, once its timeout passes: exit code 124', async () => {
    const marker = `arbor-timeout-${randomUUID()}`;
    // The subshell's own child outlives its parent (an orphan): the timeout must still reach it.
    const { code, chunks } = await run(['sh', '-c', `(sh -c "sleep 30; : ${marker}" &) ; echo started; sleep 30`], '', { timeoutSecs: 1 });
    expect(code).toBe(124);
    expect(lines(chunks)).toEqual(['stdout:started']);
    expect(spawnSync('pgrep', ['-f', marker]).status).toBe(1); // none left
  });

  it('appends to an output file, unlinks it at the end, and leaves no socket directory behind', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'arbor-ordered-'));
    try {
      const output = join(dir, 'records');
      writeFileSync(output, '');
      const [command, ...args] = orderedExecArgv({ output, workingDir: '/', environmentFile: '', env: {}, argv: ['sh', '-c', 'echo out; echo err >&2'], helper });
      // Read through an open descriptor, as the qemu driver does: the file is unlinked at the end.
      const socketDirs = () => ['/dev/shm', '/run', '/tmp'].flatMap((base) => readdirSync(base).filter((n) => n.startsWith('.arbor-exec-')));
      const before = socketDirs();
      const reader = spawn('sh', ['-c', 'exec 3<"$1"; shift; "$@"; cat <&3', 'sh', output, command, ...args], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const chunks: ExecChunk[] = [];
      const decoder = new OrderedOutputDecoder((chunk) => chunks.push(chunk));
      reader.stdout.on('data', (data: Buffer) => decoder.push(data));
      await new Promise((resolve) => reader.once('close', resolve));
      expect(lines(chunks)).toEqual(['stdout:out', 'stderr:err']);
      expect(existsSync(output)).toBe(false);
      expect(socketDirs().filter((name) => !before.includes(name))).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('decodes records split at any byte', () => {
    const record = (tag: string, text: string) => {
      const header = Buffer.alloc(5);
      header.write(tag, 0);
      header.writeUInt32BE(Buffer.byteLength(text), 1);
      return Buffer.concat([header, Buffer.from(text)]);
    };
    const bytes = Buffer.concat([record('o', 'hello'), record('e', 'oops'), record('o', '')]);
    for (let split = 0; split <= bytes.length; split++) {
      const chunks: ExecChunk[] = [];
      const decoder = new OrderedOutputDecoder((chunk) => chunks.push(chunk));
      decoder.push(bytes.subarray(0, split));
      decoder.push(bytes.subarray(split));
      expect(chunks.map((c) => `${c.stream}:${c.data.toString()}`)).toEqual(['stdout:hello', 'stderr:oops', 'stdout:']);
      expect(decoder.incomplete).toBe(0);
    }
    const said: ExecChunk[] = [];
    const partial = new OrderedOutputDecoder((chunk) => said.push(chunk));
    partial.push(record('o', 'cut').subarray(0, 6));
    expect(partial.incomplete).toBe(6);
    partial.end();
    expect(said.map((c) => `${c.stream}:${c.data.toString()}`)).toEqual(['stderr:arbor-exec: output cut off (6 bytes of an unfinished record)\n']);
    expect(() => new OrderedOutputDecoder(() => undefined).push(Buffer.from('zzzzzz'))).toThrow(/unknown stream tag/);
  });

  it('refuses a record longer than any the program writes, instead of buffering towards it', () => {
    const decoder = new OrderedOutputDecoder(() => undefined);
    const header = Buffer.alloc(5);
    header[0] = 0x6f;
    header.writeUInt32BE(0xffffffff, 1);
    expect(() => decoder.push(header)).toThrow(/more than the 16777216 a record may hold/);
  });

  it('hands on what the consumer asks to wait for', async () => {
    let release!: () => void;
    const decoder = new OrderedOutputDecoder(() => new Promise<void>((r) => (release = r)));
    const record = Buffer.concat([Buffer.from([0x6f, 0, 0, 0, 2]), Buffer.from('hi')]);
    const wait = decoder.push(record);
    expect(wait).toBeInstanceOf(Promise);
    let done = false;
    void wait!.then(() => (done = true));
    await new Promise((r) => setTimeout(r, 5));
    expect(done).toBe(false);
    release();
    await wait;
    expect(done).toBe(true);
    expect(new OrderedOutputDecoder(() => undefined).push(record)).toBeUndefined();
  });
});
