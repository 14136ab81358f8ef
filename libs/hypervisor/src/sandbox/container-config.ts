import { DEFAULT_EXEC_ENV } from '../guest-environment';
import { KIT_MOUNT } from '../kit/kit-paths';
import { GUEST_ID_MAPPING } from './guest-ids';
import { seccompForContainer, type OciSeccomp } from './seccomp-profile';
import { SECCOMP_PROGRAM_ANNOTATION } from './seccomp-programs';

/** cpu quota period: a machine with n vCPUs may use n periods of CPU time per period. */
export const CPU_PERIOD_US = 100_000;

/** Fork-bomb ceiling per machine: far above what a dev machine runs, far below the host's pid_max. */
export const MACHINE_PIDS_MAX = 16_384;

/**
 * The capabilities of every process in a machine: the default set container platforms give
 * (Docker's, containerd's), less what a machine has no use for. Dropped: CAP_MKNOD (no device
 * nodes; a user namespace refuses them anyway), CAP_NET_RAW (raw sockets: a machine speaks
 * IP through the stack, and its frames are checked on the host anyway), CAP_AUDIT_WRITE (the
 * host's audit log). Without CAP_NET_ADMIN, the machine cannot change its own interface. They are
 * capabilities of the machine's user namespace: they act only on what that namespace owns (its
 * mounts, its processes, files of its id range), never on the host's.
 */
export const MACHINE_CAPABILITIES = [
  'CAP_CHOWN',
  'CAP_DAC_OVERRIDE',
  'CAP_FSETID',
  'CAP_FOWNER',
  'CAP_SETGID',
  'CAP_SETUID',
  'CAP_SETPCAP',
  'CAP_SETFCAP',
  'CAP_NET_BIND_SERVICE',
  'CAP_SYS_CHROOT',
  'CAP_KILL',
] as const;

/**
 * Where the kernel shows host-wide state: masked (an empty file or directory in their place) or
 * read-only, as Docker and containerd ship them. /proc/sys read-only keeps kernel.core_pattern and
 * the vm.* sysctls, which a user namespace does not own, out of reach twice over.
 */
export const MASKED_PATHS = [
  '/proc/acpi',
  '/proc/asound',
  '/proc/kcore',
  '/proc/keys',
  '/proc/latency_stats',
  '/proc/timer_list',
  '/proc/timer_stats',
  '/proc/sched_debug',
  '/proc/scsi',
  '/sys/firmware',
  '/sys/devices/virtual/powercap',
];
export const READONLY_PATHS = ['/proc/bus', '/proc/fs', '/proc/irq', '/proc/sys', '/proc/sysrq-trigger'];

/**
 * The character devices a machine may open: null, zero, full, random, urandom, tty, ptmx and the
 * pseudo-terminals. runc 1.1 adds its own defaults to any list (these, /dev/net/tun and mknod of
 * anything): mknod still fails for want of CAP_MKNOD and in any user namespace, and tun needs
 * CAP_NET_ADMIN, which no machine has.
 */
const ALLOWED_DEVICES: [major: number, minor: number | null][] = [
  [1, 3],
  [1, 5],
  [1, 7],
  [1, 8],
  [1, 9],
  [5, 0],
  [5, 2],
  [136, null],
];

export interface ContainerConfigInput {
  vmId: string;
  hostname: string;
  /** The machine's overlay root, mounted on the host. */
  rootfs: string;
  /**
   * argv of the host program that gives the machine's new network namespace its interface (a
   * createRuntime hook: it runs before the init, with the runtime's state on stdin).
   */
  networkSetup: string[];
  memMib: number;
  vcpus: number;
  /** Limit swap to nothing extra (only where the kernel accounts swap; runc fails otherwise). */
  limitSwap: boolean;
  /** argv of the machine's PID 1. */
  init: string[];
  /** machineSeccomp() compiled already, for crun to load as it is (seccomp-programs.ts). */
  seccompProgram?: Buffer | null;
}

/**
 * The `linux.seccomp` section of every machine's config: Docker's default profile for
 * MACHINE_CAPABILITIES, on this host's architecture and kernel. Resolved once per process: every
 * boot uses it (its config, and the key of its compiled program), and it never changes.
 */
export function machineSeccomp(): OciSeccomp {
  return (resolvedMachineSeccomp ??= seccompForContainer([...MACHINE_CAPABILITIES]));
}
let resolvedMachineSeccomp: OciSeccomp | null = null;

/** The cgroup every machine's group sits under (`<controller>/arbor/<vm>` on v1, `arbor/<vm>` on v2). */
export const MACHINES_CGROUP = 'arbor';

/**
 * The OCI runtime config (config.json) of a machine: a user namespace mapping guest ids onto
 * GUEST_IDS, its own PID, mount, IPC, UTS, cgroup and network namespaces (the network given its
 * interface by the host before the init runs; without CAP_NET_ADMIN guest root cannot change it),
 * MACHINE_CAPABILITIES, Docker's seccomp profile, no_new_privs (setuid programs never gain
 * anything), the device allow-list, masked and read-only kernel paths, and memory/cpu/pids limits
 * on a cgroup the runtime creates, freezes and removes.
 */
export function containerConfig(input: ContainerConfigInput): object {
  const memory = input.memMib * 1024 * 1024;
  const capabilities = [...MACHINE_CAPABILITIES];
  return {
    ociVersion: '1.0.2',
    ...(input.seccompProgram ? { annotations: { [SECCOMP_PROGRAM_ANNOTATION]: input.seccompProgram.toString('base64') } } : {}),
    process: {
      terminal: false,
      user: { uid: 0, gid: 0 },
      args: input.init,
      env: [`PATH=${DEFAULT_EXEC_ENV.PATH}`],
      cwd: '/',
      capabilities: { bounding: capabilities, effective: capabilities, permitted: capabilities, inheritable: [], ambient: [] },
      noNewPrivileges: true,
    },
    root: { path: input.rootfs, readonly: false },
    hostname: input.hostname,
    hooks: {
      createRuntime: [{ path: '/bin/sh', args: input.networkSetup, env: [`PATH=${DEFAULT_EXEC_ENV.PATH}`], timeout: 60 }],
    },
    mounts: [
      { destination: '/proc', type: 'proc', source: 'proc', options: ['nosuid', 'noexec', 'nodev'] },
      { destination: '/dev', type: 'tmpfs', source: 'tmpfs', options: ['nosuid', 'strictatime', 'mode=755', 'size=65536k'] },
      {
        destination: '/dev/pts',
        type: 'devpts',
        source: 'devpts',
        options: ['nosuid', 'noexec', 'newinstance', 'ptmxmode=0666', 'mode=0620', 'gid=5'],
      },
      // No size: its pages count against the machine's memory limit.
      { destination: '/dev/shm', type: 'tmpfs', source: 'shm', options: ['nosuid', 'noexec', 'nodev', 'mode=1777'] },
      { destination: '/dev/mqueue', type: 'mqueue', source: 'mqueue', options: ['nosuid', 'noexec', 'nodev'] },
      // /sys is an empty read-only tmpfs holding the machine's own cgroups (none of the host's
      // devices, firmware or kernel settings).
      { destination: '/sys', type: 'tmpfs', source: 'sysfs', options: ['nosuid', 'noexec', 'nodev', 'ro', 'mode=755'] },
      { destination: '/sys/fs/cgroup', type: 'cgroup', source: 'cgroup', options: ['nosuid', 'noexec', 'nodev', 'relatime', 'ro'] },
    ],
    linux: {
      uidMappings: GUEST_ID_MAPPING,
      gidMappings: GUEST_ID_MAPPING,
      namespaces: ['pid', 'mount', 'ipc', 'uts', 'user', 'cgroup', 'network'].map((type) => ({ type })),
      cgroupsPath: `/${MACHINES_CGROUP}/${input.vmId}`,
      resources: {
        memory: { limit: memory, ...(input.limitSwap ? { swap: memory } : {}) },
        cpu: { quota: input.vcpus * CPU_PERIOD_US, period: CPU_PERIOD_US },
        pids: { limit: MACHINE_PIDS_MAX },
        devices: [
          { allow: false, access: 'rwm' },
          ...ALLOWED_DEVICES.map(([major, minor]) => ({ allow: true, type: 'c', major, ...(minor === null ? {} : { minor }), access: 'rwm' })),
        ],
      },
      maskedPaths: MASKED_PATHS,
      // The guest kit (sandbox/kit-layer.ts): the programs Arbor runs in the machine stay Arbor's.
      readonlyPaths: [...READONLY_PATHS, KIT_MOUNT],
      seccomp: machineSeccomp(),
    },
  };
}
