import { Deadlines } from './deadlines';

describe('deadlines checked together by one timer', () => {
  beforeEach(() => jest.useFakeTimers({ now: 0 }));
  afterEach(() => jest.useRealTimers());

  it('expires each once its time has passed, at most a tick late; a cancelled one never; the timer stops with none pending', () => {
    const deadlines = new Deadlines(250);
    const expired: string[] = [];
    deadlines.add(1000, () => expired.push('a'));
    const b = deadlines.add(1000, () => expired.push('b'));
    deadlines.add(3000, () => expired.push('c'));
    deadlines.cancel(b);
    jest.advanceTimersByTime(999);
    expect(expired).toEqual([]);
    jest.advanceTimersByTime(250);
    expect(expired).toEqual(['a']);
    jest.advanceTimersByTime(2000);
    expect(expired).toEqual(['a', 'c']);
    expect(deadlines.size).toBe(0);
    expect(jest.getTimerCount()).toBe(0);
    deadlines.add(100, () => expired.push('d'));
    jest.advanceTimersByTime(250);
    expect(expired).toEqual(['a', 'c', 'd']);
  });
});
