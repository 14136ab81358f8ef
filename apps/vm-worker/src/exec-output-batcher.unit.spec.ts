import type { ExecChunk } from '@arbor/hypervisor';
import { ExecOutputBatcher } from './exec-output-batcher';

const chunk = (stream: ExecChunk['stream'], text: string | Buffer): ExecChunk => ({ stream, data: Buffer.from(text) });

describe('exec output batcher', () => {
  it('sends the first output at once, then gathers what arrives while a batch is out', async () => {
    const batches: ExecChunk[][] = [];
    let release!: () => void;
    const batcher = new ExecOutputBatcher(async (chunks) => {
      batches.push(chunks);
      if (batches.length === 1) await new Promise<void>((r) => (release = r));
    }, { windowMs: 20, maxChunkBytes: 1024, maxBatchBytes: 1 << 20, highWaterBytes: 1 << 20 });
    batcher.push(chunk('stdout', 'a'));
    expect(batches).toEqual([[chunk('stdout', 'a')]]); // no waiting for a window
    batcher.push(chunk('stdout', 'b'));
    batcher.push(chunk('stdout', 'c'));
    batcher.push(chunk('stderr', 'd'));
    batcher.push(chunk('stdout', 'e'));
    release();
    await batcher.close();
    // Adjacent chunks of one stream merge; the order across streams is kept.
    expect(batches).toEqual([[chunk('stdout', 'a')], [chunk('stdout', 'bc'), chunk('stderr', 'd'), chunk('stdout', 'e')]]);
  });

  it('never sends a chunk larger than maxChunkBytes, and loses no byte', async () => {
    const sent: ExecChunk[] = [];
    const batcher = new ExecOutputBatcher(async (chunks) => void sent.push(...chunks), { windowMs: 20, maxChunkBytes: 1000, maxBatchBytes: 1 << 20, highWaterBytes: 1 << 20 });
    const big = Buffer.alloc(4500, 7);
    batcher.push(chunk('stdout', big));
    await batcher.close();
    expect(Math.max(...sent.map((c) => c.data.length))).toBe(1000);
    expect(Buffer.concat(sent.map((c) => c.data))).toEqual(big);
  });

  it('close reports a batch that could not be sent', async () => {
    const batcher = new ExecOutputBatcher(async () => {
      throw new Error('store closed');
    });
    batcher.push(chunk('stdout', 'x'));
    await expect(batcher.close()).rejects.toThrow('store closed');
  });

  it('sends at most maxBatchBytes per batch', async () => {
    const batches: ExecChunk[][] = [];
    let release!: () => void;
    const batcher = new ExecOutputBatcher(async (chunks) => {
      batches.push(chunks);
      if (batches.length === 1) await new Promise<void>((r) => (release = r));
    }, { windowMs: 0, maxChunkBytes: 100, maxBatchBytes: 250, highWaterBytes: 1 << 20 });
    batcher.push(chunk('stdout', 'a'));
    for (let i = 0; i < 10; i++) batcher.push(chunk(i % 2 ? 'stdout' : 'stderr', Buffer.alloc(100, i)));
    release();
    await batcher.close();
    expect(batches.slice(1).map((batch) => batch.reduce((sum, c) => sum + c.data.length, 0))).toEqual([200, 200, 200, 200, 200]);
  });

  it('holds a producer back while too much waits to be sent, and lets it go once the log caught up', async () => {
    let release!: () => void;
    const batcher = new ExecOutputBatcher(async () => {
      await new Promise<void>((r) => (release = r));
    }, { windowMs: 0, maxChunkBytes: 100, maxBatchBytes: 100, highWaterBytes: 300 });
    expect(batcher.push(chunk('stdout', Buffer.alloc(100)))).toBeUndefined(); // sent at once
    expect(batcher.push(chunk('stdout', Buffer.alloc(100)))).toBeUndefined();
    expect(batcher.push(chunk('stdout', Buffer.alloc(100)))).toBeUndefined();
    const wait = batcher.push(chunk('stdout', Buffer.alloc(100)));
    expect(wait).toBeInstanceOf(Promise);
    let resumed = false;
    void wait!.then(() => (resumed = true));
    await new Promise((r) => setTimeout(r, 10));
    expect(resumed).toBe(false);
    release(); // one batch out: 200 bytes still wait, under the high-water mark
    await new Promise((r) => setTimeout(r, 10));
    expect(resumed).toBe(true);
    for (let i = 0; i < 3; i++) {
      release();
      await new Promise((r) => setTimeout(r, 5));
    }
    await batcher.close();
  });
});
