import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureKeyQuota, MACHINE_KEY_QUOTA } from './key-quota';

describe("the kernel's key quotas for sandbox machines", () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'arbor-keys-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const set = (maxkeys: number, maxbytes: number) => {
    writeFileSync(join(dir, 'maxkeys'), `${maxkeys}\n`);
    writeFileSync(join(dir, 'maxbytes'), `${maxbytes}\n`);
  };
  const read = () => ({ maxkeys: Number(readFileSync(join(dir, 'maxkeys'), 'utf8')), maxbytes: Number(readFileSync(join(dir, 'maxbytes'), 'utf8')) });

  it("raises the kernel's defaults (200 keys, 20,000 bytes: about 200 machines) and says so", async () => {
    set(200, 20000);
    expect(await ensureKeyQuota(dir)).toEqual([`kernel.keys.maxkeys 200 → ${MACHINE_KEY_QUOTA.maxkeys}`, `kernel.keys.maxbytes 20000 → ${MACHINE_KEY_QUOTA.maxbytes}`]);
    expect(read()).toEqual(MACHINE_KEY_QUOTA);
  });

  it('never lowers what an operator set higher', async () => {
    set(1_000_000, 100);
    expect(await ensureKeyQuota(dir)).toEqual([`kernel.keys.maxbytes 100 → ${MACHINE_KEY_QUOTA.maxbytes}`]);
    expect(read()).toEqual({ maxkeys: 1_000_000, maxbytes: MACHINE_KEY_QUOTA.maxbytes });
  });
});
