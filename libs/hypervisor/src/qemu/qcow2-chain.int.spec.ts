import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, openSync, closeSync, rmSync, writeSync, ftruncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { backingChain, createOverlay, flattenOnto } from './qcow2-chain';

/**
 * Disk chains ending in a built image's raw ext4 (qemu-img and qemu-io, no VM): the chain is
 * walked down to the raw disk, and a flattened layer keeps what every layer above it held.
 */
describe('qcow2 chains on a raw base', () => {
  const dir = mkdtempSync(join(tmpdir(), 'arbor-qcow2-chain-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  /** Whether 4 KiB at `offset` of the image, as a guest reads it, hold the byte `pattern`. */
  const holds = (image: string, offset: string, pattern: string) => {
    const read = spawnSync('qemu-io', ['-r', '-U', '-c', `read -P ${pattern} ${offset} 4k`, image], { encoding: 'utf8' });
    return read.status === 0 && !/Pattern verification failed/.test(read.stdout + read.stderr);
  };

  it('walks to the raw base and flattens layers onto it without losing a write', async () => {
    const base = join(dir, 'root.ext4');
    const fd = openSync(base, 'w');
    ftruncateSync(fd, 64 * 1024 * 1024);
    writeSync(fd, Buffer.alloc(4096, 0x11), 0, 4096, 0);
    closeSync(fd);
    const first = join(dir, 'first.qcow2');
    const second = join(dir, 'second.qcow2');
    await createOverlay(first, base, 128, 'raw');
    execFileSync('qemu-io', ['-c', 'write -P 0x22 1M 4k', first]);
    await createOverlay(second, first, 128);
    execFileSync('qemu-io', ['-c', 'write -P 0x33 2M 4k', second]);
    expect(await backingChain(second)).toEqual([second, first, base]);

    const flat = join(dir, 'flat.qcow2');
    await flattenOnto(second, base, flat, 'raw');
    expect(await backingChain(flat)).toEqual([flat, base]);
    for (const [offset, pattern] of [['0', '0x11'], ['1M', '0x22'], ['2M', '0x33']]) expect([offset, holds(flat, offset, pattern)]).toEqual([offset, true]);
    expect(holds(flat, '2M', '0x44')).toBe(false);
  });
});
