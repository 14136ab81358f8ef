import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describeUnless, rootReason } from '../../../../test/support/skip-unless';
import { cgroup2Mount, FAVOR_DYNMODS, favorCgroupMoves } from './cgroup-favor-dynmods';

const hostMount = () => cgroup2Mount(readFileSync('/proc/self/mountinfo', 'utf8'));
const reason = rootReason ?? (hostMount() ? null : 'this host has no cgroup2 hierarchy');

describeUnless(reason)('favorCgroupMoves on this host', () => {
  it('sets favordynmods on the cgroup2 hierarchy, keeping its other options, and leaves it set', async () => {
    const mount = hostMount()!;
    const others = mount.superOptions.filter((option) => option !== FAVOR_DYNMODS);
    // The hierarchy as a host has it before the driver: without the option (the same remount the driver makes, less it).
    execFileSync('mount', ['--options-source', 'disable', '-o', ['remount', ...mount.mountOptions, ...others].join(','), mount.path]);
    expect(hostMount()!.superOptions).not.toContain(FAVOR_DYNMODS);

    expect(await favorCgroupMoves()).toContain(`${FAVOR_DYNMODS} on ${mount.path}`);
    const after = hostMount()!;
    expect([...after.superOptions].sort()).toEqual([...others, FAVOR_DYNMODS].sort());
    expect(after.mountOptions).toEqual(mount.mountOptions);
    expect(await favorCgroupMoves()).toBeNull(); // set already: nothing to do
  });
});
