import { OpenedValues } from './opened-values';

describe('OpenedValues: the plaintext a process keeps, bounded', () => {
  it('drops the least recently used values past its size', () => {
    const values = new OpenedValues(10);
    values.set('a', 'abcd');
    values.set('b', 'abcd');
    expect(values.get('a')).toHaveLength(4); // a is now the most recent
    values.set('c', 'abcd');
    expect([values.get('a'), values.get('b'), values.get('c')].map((value) => value?.length)).toEqual([4, undefined, 4]);
  });

  it('keeps nothing bigger than itself', () => {
    const values = new OpenedValues(10);
    values.set('big', 'abcdefghijk');
    expect(values.get('big')).toBeUndefined();
  });
});
