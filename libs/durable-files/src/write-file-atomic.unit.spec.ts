import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readJsonFile } from './read-json-file';
import { writeFileAtomic, writeJsonAtomic } from './write-file-atomic';

describe('writeFileAtomic', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'arbor-atomic-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('replaces the content whole, with the mode asked, and leaves no temporary file behind', async () => {
    const file = join(dir, 'state.json');
    writeFileSync(file, 'old');
    expect(await writeFileAtomic(file, 'new content', { mode: 0o600 })).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe('new content');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(['state.json']);
  });

  it('with ifAbsent keeps the first content and says so', async () => {
    const file = join(dir, 'secret');
    expect(await writeFileAtomic(file, 'first', { ifAbsent: true })).toBe(true);
    expect(await writeFileAtomic(file, 'second', { ifAbsent: true })).toBe(false);
    expect(readFileSync(file, 'utf8')).toBe('first');
    expect(readdirSync(dir)).toEqual(['secret']);
  });

  it('concurrent writers each leave one whole document, never a mix', async () => {
    const file = join(dir, 'record.json');
    const documents = Array.from({ length: 20 }, (_, i) => ({ writer: i, payload: String(i).repeat(10_000) }));
    await Promise.all(documents.map((doc) => writeJsonAtomic(file, doc)));
    expect(documents).toContainEqual(await readJsonFile(file));
    expect(readdirSync(dir)).toEqual(['record.json']);
  });

  it('reads a missing document as null, and refuses a write into a missing directory', async () => {
    expect(await readJsonFile(join(dir, 'none.json'))).toBeNull();
    await expect(writeFileAtomic(join(dir, 'missing', 'x'), 'x')).rejects.toThrow(/ENOENT/);
  });
});
