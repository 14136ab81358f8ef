import { Query } from 'mingo';
import type { Document, Filter } from '../read-model-store.port';
import { equalityTest } from './equality-filter';

describe('equalityTest: filters of scalar equalities without mingo', () => {
  const docs: Document[] = [
    { _id: 'a', org_id: 'o1', deleted_at: null, n: 1, flag: true, nested: { state: 'running' } },
    { _id: 'b', org_id: 'o2', n: 2, flag: false, nested: { state: 'paused' } },
    { _id: 'c', org_id: 'o1', deleted_at: 't', labels: ['x', 'y'], nested: null },
    { _id: 'd', org_id: ['o1', 'o3'], holds: [null] },
  ];

  it.each<Filter>([
    {},
    { org_id: 'o1' },
    { org_id: 'o1', deleted_at: null },
    { deleted_at: null },
    { n: 1 },
    { flag: false },
    { 'nested.state': 'running' },
    { 'nested.state': null },
    { labels: 'y' },
    { holds: null },
    { org_id: 'o3' },
    { missing: 'x' },
  ])('matches the documents MongoDB matches for %j', (filter) => {
    const test = equalityTest(filter)!;
    const query = new Query<Document>(filter);
    expect(docs.map((doc) => test(doc))).toEqual(docs.map((doc) => query.test(doc)));
  });

  it.each<Filter>([{ n: { $gt: 1 } }, { $or: [{ n: 1 }] }, { nested: { state: 'running' } }, { labels: ['x', 'y'] }])('leaves %j to mingo', (filter) => {
    expect(equalityTest(filter)).toBeUndefined();
  });

  it('leaves a path through an array to mingo', () => {
    expect(equalityTest({ 'items.k': 1 })!({ _id: 'e', items: [{ k: 1 }] })).toBeUndefined();
  });
});
