import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hybridControllers } from './hybrid-cgroups';

/** A cgroup root laid out as the kernel shows one: `files` relative to it, with their contents. */
function cgroupRoot(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'arbor-cgroups-'));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  roots.push(root);
  return root;
}
const roots: string[] = [];
afterAll(() => roots.forEach((root) => rmSync(root, { recursive: true, force: true })));

const V1 = { 'memory/cgroup.procs': '', 'freezer/cgroup.procs': '' };

describe('hybridControllers: what stands between a host and crun', () => {
  it('finds nothing on a unified (v2) host, whatever it offers', async () => {
    expect(await hybridControllers(cgroupRoot({ 'cgroup.controllers': 'cpu memory pids', 'cgroup.subtree_control': 'cpu memory pids' }))).toEqual({
      offered: [],
      blocked: null,
    });
  });

  it('finds nothing on a v1 host without a cgroup2 hierarchy', async () => {
    expect(await hybridControllers(cgroupRoot(V1))).toEqual({ offered: [], blocked: null });
  });

  it('finds nothing on a hybrid host whose cgroup2 hierarchy offers no controller', async () => {
    expect(await hybridControllers(cgroupRoot({ ...V1, 'unified/cgroup.controllers': '\n', 'unified/cgroup.subtree_control': '' }))).toEqual({
      offered: [],
      blocked: null,
    });
  });

  it("names the controllers a hybrid host's cgroup2 hierarchy offers and no group there uses: they can move to v1", async () => {
    const root = cgroupRoot({ ...V1, 'unified/cgroup.controllers': 'hugetlb misc\n', 'unified/cgroup.subtree_control': '\n' });
    expect(await hybridControllers(root)).toEqual({ offered: ['hugetlb', 'misc'], blocked: null });
  });

  it('says why they cannot move when the cgroup2 hierarchy hands them down to its groups', async () => {
    const root = cgroupRoot({ ...V1, 'unified/cgroup.controllers': 'hugetlb', 'unified/cgroup.subtree_control': 'hugetlb' });
    const found = await hybridControllers(root);
    expect(found.offered).toEqual(['hugetlb']);
    expect(found.blocked).toMatch(/hands hugetlb down to its groups/);
  });
});
