import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileGuestHelper } from './guest-helper-build';
import { KIT_INIT, SSHD_START } from './kit-files';

/**
 * The guest helper's commands besides exec (ordered-output.unit.spec.ts has exec), run here on
 * the host: the static binary is the same one machines run.
 */
const dir = mkdtempSync(join(tmpdir(), 'arbor-guest-helper-'));
const helper = join(dir, 'arbor-guest');
beforeAll(() => compileGuestHelper(helper), 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the guest helper', () => {
  it('supervises services: starts each again after it exits, with its arguments intact', async () => {
    const log = join(dir, 'starts');
    writeFileSync(join(dir, 'service'), `#!/bin/sh\necho "$1|$2" >> ${log}\n`, { mode: 0o755 });
    const supervisor = spawn(helper, ['supervise', '--', join(dir, 'service'), "it's here", 'a b', '--', join(dir, 'service'), 'second'], { stdio: 'ignore' });
    await new Promise((resolve) => setTimeout(resolve, 1800));
    supervisor.kill('SIGKILL');
    const starts = readFileSync(log, 'utf8').trim().split('\n');
    expect(starts.filter((line) => line === "it's here|a b").length).toBeGreaterThanOrEqual(3); // then every half second
    expect(starts.filter((line) => line === 'second|').length).toBeGreaterThanOrEqual(3);
    expect(new Set(starts)).toEqual(new Set(["it's here|a b", 'second|']));
  });

  it('starts a service that ran a second or more again at once, and one that exited as it started half a second later', async () => {
    // Each run logs when it started and when it ended (ms, the host's monotonic-enough clock).
    const log = join(dir, 'runs');
    const service = (name: string, seconds: string) => {
      writeFileSync(join(dir, name), `#!/bin/sh\necho "${name} start $(date +%s%3N)" >> ${log}\nsleep ${seconds}\necho "${name} end $(date +%s%3N)" >> ${log}\n`, { mode: 0o755 });
      return join(dir, name);
    };
    const supervisor = spawn(helper, ['supervise', '--', service('lasting', '1.2'), '--', service('brief', '0')], { stdio: 'ignore' });
    await new Promise((resolve) => setTimeout(resolve, 3200));
    supervisor.kill('SIGKILL');
    const lines = readFileSync(log, 'utf8').trim().split('\n').map((line) => line.split(' '));
    /** From each end of `name` to its next start. */
    const gaps = (name: string) => {
      const runs = lines.filter(([service]) => service === name);
      const out: number[] = [];
      runs.forEach(([, what, at], index) => {
        const next = runs[index + 1];
        if (what === 'end' && next?.[1] === 'start') out.push(Number(next[2]) - Number(at));
      });
      return out;
    };
    expect(gaps('lasting').length).toBeGreaterThanOrEqual(1);
    for (const gap of gaps('lasting')) expect(gap).toBeLessThan(300); // no half-second wait
    expect(gaps('brief').length).toBeGreaterThanOrEqual(2);
    for (const gap of gaps('brief')) expect(gap).toBeGreaterThanOrEqual(450);
  });

  it("turns an environment file into one sshd SetEnv line, quoted as sshd's parser reads it", () => {
    const file = join(dir, 'environment');
    writeFileSync(file, ['A=1', 'QUOTED="with spaces"', 'TRICKY=say "hi" \\ there', '# comment', 'not a pair', ''].join('\n'));
    expect(execFileSync(helper, ['sshd-environment', file], { encoding: 'utf8' })).toBe('SetEnv "A=1" "QUOTED=with spaces" "TRICKY=say \\"hi\\" \\\\ there"\n');
    expect(execFileSync(helper, ['sshd-environment', join(dir, 'missing')], { encoding: 'utf8' })).toBe('');
  });

  it('measures a root filesystem without following its symlinks, and refuses one with a hard link to a file outside it', () => {
    const root = join(dir, 'root');
    mkdirSync(join(root, 'etc'), { recursive: true });
    writeFileSync(join(root, 'etc/file'), 'twelve bytes');
    linkSync(join(root, 'etc/file'), join(root, 'etc/same-file'));
    symlinkSync('/etc/shadow', join(root, 'etc/shadow-link'));
    writeFileSync(join(root, 'etc/sparse'), '');
    truncateSync(join(root, 'etc/sparse'), 1 << 40); // 1 TiB long, nothing in it
    const measured = execFileSync(helper, ['prepare-tree', root], { encoding: 'utf8' });
    // etc, file, same-file, the symlink, sparse: as du counts them (the sparse file costs nothing).
    const du = Number(execFileSync('du', ['-s', '-B1', '--count-links', root], { encoding: 'utf8' }).split('\t')[0]) - Number(execFileSync('stat', ['-c', '%b', root], { encoding: 'utf8' })) * 512;
    expect(measured).toBe(`entries=5 bytes=${du}\n`);
    expect(du).toBeLessThan(1 << 20);
    writeFileSync(join(dir, 'outside'), 'host data');
    linkSync(join(dir, 'outside'), join(root, 'etc/linked-out'));
    const refused = spawnSync(helper, ['prepare-tree', root], { encoding: 'utf8' });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/has 2 hard links, only 1 of them inside the tree/);
  });

  it('copies a memory stream from a socket into a file and sends a file into a socket, byte for byte', async () => {
    const memory = randomBytes(3 * 1024 * 1024 + 17); // more than one of the sink's reads
    const socketPath = join(dir, 'migration.sock');
    const received = join(dir, 'received.bin');
    // QEMU's side of a save: it connects and writes its stream; the sink is handed the accepted socket.
    const server = createServer({ pauseOnConnect: true });
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    const sunk = new Promise<number | null>((resolve) =>
      server.once('connection', (socket) =>
        spawn(helper, ['memory-sink', received], { stdio: [socket, 'ignore', 'inherit'] }).once('exit', (code) => {
          socket.destroy(); // this process's copy of the connection, never read
          resolve(code);
        }),
      ),
    );
    const writer = connect(socketPath);
    writer.end(memory);
    expect(await sunk).toBe(0);
    server.close();
    expect(readFileSync(received).equals(memory)).toBe(true);
    expect(statSync(received).mode & 0o777).toBe(0o600);

    // A restore: the source sends the file into a connection to the listening side.
    const reader = createServer();
    const read = new Promise<Buffer>((resolve) =>
      reader.once('connection', (socket) => {
        const chunks: Buffer[] = [];
        socket.on('data', (chunk: Buffer) => chunks.push(chunk)).once('end', () => resolve(Buffer.concat(chunks)));
      }),
    );
    await new Promise<void>((resolve) => reader.listen(join(dir, 'incoming.sock'), resolve));
    const connection = await new Promise<Socket>((resolve) => {
      const socket = connect(join(dir, 'incoming.sock'), () => resolve(socket));
    });
    const sent = await new Promise<number | null>((resolve) => spawn(helper, ['memory-source', received], { stdio: ['ignore', connection, 'inherit'] }).once('exit', resolve));
    connection.destroy();
    expect(sent).toBe(0);
    expect((await read).equals(memory)).toBe(true);
    reader.close();
  });

  it("ships an init and an sshd start that the kit's shell can parse", () => {
    for (const script of [KIT_INIT, SSHD_START]) expect(() => execFileSync('busybox', ['sh', '-n', '-c', script], { stdio: 'pipe' })).not.toThrow();
  });
});
