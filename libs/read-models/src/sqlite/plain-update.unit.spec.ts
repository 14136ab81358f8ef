import { updateMany, type Modifier } from 'mingo/updater';
import type { Document, Update } from '../read-model-store.port';
import { applyPlainUpdate } from './plain-update';

/** What mingo (MongoDB's rules) makes of the update: the document, or the error's message. */
function byMingo(doc: Document, update: Update): Document | string {
  const copy = structuredClone(doc);
  try {
    updateMany([copy], {}, update as Modifier<Document>);
    return copy;
  } catch (error) {
    return (error as Error).message;
  }
}

describe('applyPlainUpdate: $set, $unset and $inc without mingo', () => {
  const doc = (): Document => ({ _id: 'a', n: 1, name: 'x', config: { cpu: 1, mem: 512 }, tags: ['t'], nested: { keep: 3, drop: 4 }, nothing: null });

  it.each<[string, Update]>([
    ['$set of top-level and new fields', { $set: { name: 'y', state: 'running' } }],
    ['$set of dotted paths, making objects on the way', { $set: { 'config.mem': 1024, 'config.disk.size': 10, 'fresh.a.b': true } }],
    ['$set of an object value', { $set: { config: { cpu: 4 } } }],
    ['$unset of present, nested and absent fields', { $unset: { name: '', 'nested.drop': '', absent: '', 'missing.deep': '' } }],
    ['$inc of present, missing and dotted fields', { $inc: { n: 2, down: -1, 'stats.hits': 1, 'config.cpu': 0.5 } }],
    ['the three together', { $set: { name: 'z' }, $inc: { n: 1 }, $unset: { 'nested.keep': '' } }],
  ])('matches MongoDB for %s', (_name, update) => {
    const mine = doc();
    expect(applyPlainUpdate(mine, update)).toBe(true);
    expect(mine).toEqual(byMingo(doc(), update));
  });

  it.each<[string, Update]>([
    ['another operator', { $push: { tags: 'u' } }],
    ['a path through an array', { $set: { 'tags.0': 'u' } }],
    ['a path through a scalar', { $set: { 'name.first': 'u' } }],
    ['a path through null', { $set: { 'nothing.a': 1 } }],
    ['$inc of a string', { $inc: { name: 1 } }],
    ['$inc by a string', { $inc: { n: '1' } }],
    ['overlapping paths', { $set: { config: {}, 'config.cpu': 2 } }],
    ['the same path twice', { $set: { n: 2 }, $inc: { n: 1 } }],
    ['the _id', { $set: { _id: 'b' } }],
    ['an operator in a path', { $set: { '$bad': 1 } }],
  ])('leaves the document untouched and answers false for %s', (_name, update) => {
    const mine = doc();
    expect(applyPlainUpdate(mine, update)).toBe(false);
    expect(mine).toEqual(doc());
  });

  it('keeps its own copy of an object value', () => {
    const value = { cpu: 4 };
    const mine = doc();
    applyPlainUpdate(mine, { $set: { config: value } });
    value.cpu = 8;
    expect(mine.config).toEqual({ cpu: 4 });
  });
});
