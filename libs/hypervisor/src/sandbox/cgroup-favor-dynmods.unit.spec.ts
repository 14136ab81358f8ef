import { cgroup2Mount, favorDynmodsRemountOptions } from './cgroup-favor-dynmods';

// /proc/self/mountinfo lines as the kernel writes them.
const SYSTEMD_V2 = [
  '22 29 0:20 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw',
  '26 22 0:23 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot',
].join('\n');
const HYBRID = [
  '31 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755',
  '33 31 0:29 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory',
  '41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw',
].join('\n');

describe('cgroup2Mount: the cgroup2 hierarchy in mountinfo', () => {
  it('finds it on a unified host, with the mount options apart from the hierarchy options', () => {
    expect(cgroup2Mount(SYSTEMD_V2)).toEqual({
      path: '/sys/fs/cgroup',
      mountOptions: ['rw', 'nosuid', 'nodev', 'noexec', 'relatime'],
      superOptions: ['rw', 'nsdelegate', 'memory_recursiveprot'],
    });
  });

  it('finds it beside the v1 hierarchies of a hybrid host, and none on a v1 host', () => {
    expect(cgroup2Mount(HYBRID)?.path).toBe('/sys/fs/cgroup/unified');
    expect(cgroup2Mount(HYBRID.split('\n').slice(0, 2).join('\n'))).toBeNull();
  });

  it('reads an escaped mount point as the path it names', () => {
    expect(cgroup2Mount('41 31 0:38 / /run/my\\040cgroups rw - cgroup2 none rw')?.path).toBe('/run/my cgroups');
  });
});

describe('favorDynmodsRemountOptions', () => {
  it('keeps every option the hierarchy has (a cgroup2 remount clears those it is not given), once each', () => {
    expect(favorDynmodsRemountOptions(cgroup2Mount(SYSTEMD_V2)!)).toBe('remount,rw,nosuid,nodev,noexec,relatime,nsdelegate,memory_recursiveprot,favordynmods');
    expect(favorDynmodsRemountOptions(cgroup2Mount(HYBRID)!)).toBe('remount,rw,relatime,favordynmods');
  });
});
