import { FinishedPrefixQueue } from './finished-prefix-queue';

const entry = (position: number, finished = false) => ({ position, finished });

describe('a queue of work taken in log order', () => {
  it('gives out the longest finished prefix only, in order, once', () => {
    const queue = new FinishedPrefixQueue<ReturnType<typeof entry>>();
    const [a, b, c] = [entry(10), entry(11), entry(12)];
    [a, b, c].forEach((e) => queue.push(e));
    expect(queue.takeFinished()).toEqual([]);
    b.finished = true;
    c.finished = true;
    expect(queue.takeFinished()).toEqual([]); // 10 is not done: nothing after it counts yet
    a.finished = true;
    expect(queue.takeFinished().map((e) => e.position)).toEqual([10, 11, 12]);
    expect(queue.takeFinished()).toEqual([]);
    expect(queue.pending()).toEqual([]);
  });

  it('keeps its order across the compaction of a long taken front', () => {
    const queue = new FinishedPrefixQueue<ReturnType<typeof entry>>();
    for (let position = 0; position < 5000; position++) queue.push(entry(position, true));
    const late = entry(5000);
    queue.push(late);
    queue.push(entry(5001, true));
    expect(queue.takeFinished().at(-1)?.position).toBe(4999);
    expect(queue.pending().map((e) => e.position)).toEqual([5000, 5001]);
    for (let position = 5002; position < 5010; position++) queue.push(entry(position, true));
    late.finished = true;
    expect(queue.takeFinished().map((e) => e.position)).toEqual([5000, 5001, 5002, 5003, 5004, 5005, 5006, 5007, 5008, 5009]);
  });
});
