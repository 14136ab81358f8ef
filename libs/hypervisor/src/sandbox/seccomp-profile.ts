import { release } from 'node:os';
import dockerDefault from './seccomp/docker-default.json';

/**
 * `seccomp/docker-default.json` is Docker's default seccomp profile, verbatim: the file
 * profiles/seccomp/default.json of Docker 20.10.24 as Debian 12 ships it (package
 * golang-github-docker-docker-dev 20.10.24+dfsg1-1+deb12u1; Apache-2.0, Copyright Docker, Inc.).
 * It is kept in Docker's own format, so it can be replaced by a newer release as it is; Docker
 * resolves that format (rules that apply only with some capabilities, on some architectures or
 * from some kernel on) into the OCI runtime's format when it starts a container, and so does
 * `seccompForContainer` below, the same way (moby profiles/seccomp/seccomp_linux.go).
 *
 * What it refuses (EPERM): everything not listed, among that keyctl/add_key, and, without
 * CAP_SYS_ADMIN (which machines never get), mount, umount, unshare, setns, namespace flags of
 * clone, bpf, perf_event_open, syslog, quotactl, pivot_root; without the matching capability
 * also reboot, the module calls, ioperm/iopl, settimeofday, acct, open_by_handle_at.
 */

interface DockerRule {
  names: string[];
  action: string;
  errnoRet?: number;
  args?: { index: number; value: number; valueTwo?: number; op: string }[] | null;
  includes?: { caps?: string[]; arches?: string[]; minKernel?: string };
  excludes?: { caps?: string[]; arches?: string[]; minKernel?: string };
}

interface DockerProfile {
  defaultAction: string;
  defaultErrnoRet?: number;
  archMap: { architecture: string; subArchitectures: string[] }[];
  syscalls: DockerRule[];
}

/** The `linux.seccomp` section of an OCI runtime config. */
export interface OciSeccomp {
  defaultAction: string;
  defaultErrnoRet?: number;
  architectures: string[];
  syscalls: { names: string[]; action: string; errnoRet?: number; args?: DockerRule['args'] }[];
}

/** Node's architecture names as Docker's profile spells them (Go's GOARCH) and libseccomp's. */
const ARCHES: Record<string, { go: string; seccomp: string }> = {
  x64: { go: 'amd64', seccomp: 'SCMP_ARCH_X86_64' },
  arm64: { go: 'arm64', seccomp: 'SCMP_ARCH_AARCH64' },
};

/** "6.18.4-foo" → [6, 18]: what minKernel ("4.8") is compared with. */
function kernelVersion(text: string): [number, number] {
  const [major, minor] = text.split(/[.-]/).map(Number);
  return [major || 0, minor || 0];
}

function atLeast(kernel: [number, number], wanted: string): boolean {
  const [major, minor] = kernelVersion(wanted);
  return kernel[0] > major || (kernel[0] === major && kernel[1] >= minor);
}

/**
 * Docker's default profile resolved for a container whose bounding capability set is
 * `capabilities`, on this host's architecture and kernel: a rule is kept when all of its
 * `includes` hold (every capability listed is in the set, the architecture is listed, the kernel
 * is recent enough) and none of its `excludes` does.
 */
export function seccompForContainer(capabilities: readonly string[], arch = process.arch, kernel = release()): OciSeccomp {
  const profile = dockerDefault as DockerProfile;
  const native = ARCHES[arch];
  if (!native) throw new Error(`no seccomp profile mapping for the ${arch} architecture`);
  const running = kernelVersion(kernel);
  const applies = (rule: DockerRule) => {
    const { includes = {}, excludes = {} } = rule;
    if (includes.caps?.some((cap) => !capabilities.includes(cap))) return false;
    if (includes.arches?.length && !includes.arches.includes(native.go)) return false;
    if (includes.minKernel && !atLeast(running, includes.minKernel)) return false;
    if (excludes.caps?.some((cap) => capabilities.includes(cap))) return false;
    if (excludes.arches?.includes(native.go)) return false;
    if (excludes.minKernel && atLeast(running, excludes.minKernel)) return false;
    return true;
  };
  const subArchitectures = profile.archMap.find((entry) => entry.architecture === native.seccomp)?.subArchitectures ?? [];
  return {
    defaultAction: profile.defaultAction,
    ...(profile.defaultErrnoRet !== undefined ? { defaultErrnoRet: profile.defaultErrnoRet } : {}),
    architectures: [native.seccomp, ...subArchitectures],
    syscalls: profile.syscalls.filter(applies).map(({ names, action, errnoRet, args }) => ({
      names,
      action,
      ...(errnoRet !== undefined ? { errnoRet } : {}),
      ...(args?.length ? { args } : {}),
    })),
  };
}
