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
    }, { windowMs: 20, maxChunkBytes: 1024 });
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
    const batcher = new ExecOutputBatcher(async (chunks) => void sent.push(...chunks), { windowMs: 20, maxChunkBytes: 1000 });
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
});
