import { find } from 'mingo';
import type { Document, Sort } from '../read-model-store.port';
import { inSortOrder, sortDocuments } from './document-sort';
import { compareIds } from './id-order';

/** What mingo answers: the order MongoDB gives. */
const mingoSorted = (docs: Document[], sort: Sort) => find(docs, {}, {}, { scriptEnabled: false }).sort(sort).all();

/** A small deterministic generator, so a failure names the same documents every time. */
function generator(seed: number) {
  let state = seed;
  return (n: number) => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state % n;
  };
}

describe('sorting documents as mingo does', () => {
  const sorts: Sort[] = [{ name: 1 }, { name: -1 }, { org: 1, name: 1 }, { org: -1, n: 1, _id: 1 }, { 'meta.at': -1, n: -1 }];

  it.each(sorts)('orders strings and numbers with ties exactly as mingo: %j', (sort) => {
    const next = generator(42);
    for (let round = 0; round < 20; round++) {
      const docs: Document[] = Array.from({ length: 1 + next(60) }, (_, i) => ({
        _id: `id-${next(1000)}-${i}`,
        org: ['a', 'b', 'B', 'é', 'ab'][next(5)],
        name: `n${next(8)}`,
        n: next(4) - 2 + (next(3) === 0 ? 0.5 : 0),
        meta: { at: `2026-01-0${1 + next(3)}` },
      }));
      expect(sortDocuments(docs, sort)).toEqual(mingoSorted(docs, sort));
    }
  });

  it('leaves nulls, missing fields, arrays and mixed types to mingo, with the same answer', () => {
    const docs: Document[] = [
      { _id: '1', name: 'b' },
      { _id: '2', name: null },
      { _id: '3' },
      { _id: '4', name: 3 },
      { _id: '5', name: ['a', 'z'] },
      { _id: '6', name: 'a' },
      { _id: '7', name: { nested: true } },
    ];
    for (const sort of [{ name: 1 }, { name: -1 }] as Sort[]) expect(sortDocuments(docs, sort)).toEqual(mingoSorted(docs, sort));
  });

  it.each(sorts)('says documents are in order exactly when they stand as sortDocuments puts them, ties by _id: %j', (sort) => {
    const next = generator(7);
    for (let round = 0; round < 20; round++) {
      const docs: Document[] = Array.from({ length: 2 + next(30) }, (_, i) => ({
        _id: `id-${next(1000)}-${i}`,
        org: ['a', 'b', 'B'][next(3)],
        name: `n${next(4)}`,
        n: next(3),
        meta: { at: `2026-01-0${1 + next(2)}` },
      }));
      const sorted = sortDocuments([...docs].sort((a, b) => compareIds(a._id, b._id)), sort);
      expect(inSortOrder(sorted, sort)).toBe(true);
      // Any other order is refused: each adjacent pair swapped, and the reverse.
      const i = next(sorted.length - 1);
      expect(inSortOrder([...sorted.slice(0, i), sorted[i + 1], sorted[i], ...sorted.slice(i + 2)], sort)).toBe(false);
      expect(inSortOrder([...sorted].reverse(), sort)).toBe(false);
    }
  });

  it('leaves nothing that only mingo orders in place', () => {
    expect(inSortOrder([{ _id: '1', name: null }, { _id: '2', name: 'a' }], { name: 1 })).toBe(false);
    expect(inSortOrder([{ _id: '1', name: 1 }, { _id: '2', name: 'a' }], { name: 1 })).toBe(false);
    expect(inSortOrder([{ _id: '1', name: 'a' }, { _id: '2' }], { name: 1 })).toBe(false);
    expect(inSortOrder([{ _id: '1', name: 'a' }, { _id: '2', name: 'b' }], { name: 1 })).toBe(true);
  });
});
