import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CGROUP_ROOT, isUnified, probeCgroups } from './cgroup-probe';
import { describeUnless, itUnless } from '../../../../test/support/skip-unless';

/**
 * The probe fails closed: machines get memory, cpu and pids limits, the freezer and the device
 * allow-list, or the driver does not run. A cgroup2 hierarchy mounted next to the host's shows the
 * v2 side whatever the host runs (here its controllers are bound to v1, so it offers almost none).
 * Needs root (mount); when the mount fails the suite says why and skips.
 */
function mountCgroup2(): { root: string | null; skipReason: string | null } {
  if (process.getuid?.() !== 0) return { root: null, skipReason: 'needs root to mount cgroup2' };
  const root = mkdtempSync(join(tmpdir(), 'arbor-cgroup2-'));
  const mounted = spawnSync('mount', ['-t', 'cgroup2', 'none', root], { encoding: 'utf8' });
  if (mounted.status === 0) return { root, skipReason: null };
  rmdirSync(root);
  return { root: null, skipReason: `mount -t cgroup2 failed: ${(mounted.stderr || mounted.error?.message || '').trim()}` };
}

const { root, skipReason } = mountCgroup2();
if (skipReason) console.warn(`cgroup v2 probe tests SKIPPED: ${skipReason}`);
const describeMounted = describeUnless(root ? null : skipReason ?? 'no cgroup2 hierarchy could be mounted');

afterAll(() => {
  if (!root) return;
  try {
    rmdirSync(join(root, 'arbor')); // made by the probe; stays where real machines live in it
  } catch {
    /* absent, or in use */
  }
  spawnSync('umount', [root]);
  rmdirSync(root);
});

describe('probeCgroups', () => {
  it('is not ok, naming what is missing, where neither hierarchy is mounted', async () => {
    const probe = await probeCgroups(tmpdir());
    expect(probe).toMatchObject({ ok: false, version: null });
    expect(probe.reason).toMatch(/cgroup v1 memory\/cpu\/pids\/freezer\/devices hierarchies are not mounted: machines would run without those limits/);
  });

  itUnless(isUnified() ? 'this host has the unified (v2) hierarchy, not v1' : null)('is ok on this host’s cgroup v1 hierarchies', async () => {
    expect(await probeCgroups(CGROUP_ROOT)).toMatchObject({ ok: true, version: 1 });
  });
});

describeMounted('probeCgroups on a mounted cgroup2 hierarchy', () => {
  it('is ok only when the hierarchy offers memory, cpu and pids; otherwise it says which are missing', async () => {
    const offered = readFileSync(join(root!, 'cgroup.controllers'), 'utf8').trim().split(/\s+/);
    const missing = ['memory', 'cpu', 'pids'].filter((controller) => !offered.includes(controller));
    const probe = await probeCgroups(root!);
    expect(probe.version).toBe(2);
    if (missing.length === 0) {
      expect(probe).toMatchObject({ ok: true, reason: expect.stringContaining('memory/cpu/pids limits') });
    } else {
      expect(probe.ok).toBe(false);
      expect(probe.reason).toContain(`does not offer ${missing.join(', ')}`);
      expect(probe.reason).toContain('machines would run without those limits');
    }
  });
});
