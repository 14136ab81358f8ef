/**
 * Where Arbor's guest kit sits in every machine: a read-only tree at /.arbor that Arbor brings
 * itself (guest-kit.ts), so exec, files, init, SSH and the guest agent never depend on what the
 * machine's image holds (no shell, perl or glibc needed; a bare busybox or distroless root boots).
 */
export const KIT_MOUNT = '/.arbor';

export const KIT_PATHS = {
  /** The static helper (arbor-guest.c): ordered exec, the service supervisor, kill-tree, reseed, set-clock. */
  helper: `${KIT_MOUNT}/bin/arbor-guest`,
  /** busybox-static: the shell and tools of Arbor's own scripts in the machine (init, files, identity). */
  busybox: `${KIT_MOUNT}/bin/busybox`,
  /** The machine's init (PID 1): `init qemu` or `init sandbox`. */
  init: `${KIT_MOUNT}/init`,
  /** Debian's OpenSSH server, run on the kit's own loader and libraries. */
  sshd: `${KIT_MOUNT}/sbin/sshd`,
  sshdConfig: `${KIT_MOUNT}/etc/sshd_config`,
  sftpServer: `${KIT_MOUNT}/libexec/sftp-server`,
  /** Debian's QEMU guest agent (qemu machines). */
  qemuGa: `${KIT_MOUNT}/sbin/qemu-ga`,
  /** iproute2's ip: the qemu guest's network is configured with it (`ip -batch`). */
  ip: `${KIT_MOUNT}/sbin/ip`,
  /** e2fsprogs' resize2fs: a qemu guest's root file system grows with its disk. */
  resize2fs: `${KIT_MOUNT}/sbin/resize2fs`,
  /** The kit's glibc loader; every dynamically linked kit program names it as its interpreter. */
  loader: `${KIT_MOUNT}/lib/ld-linux-x86-64.so.2`,
  libDir: `${KIT_MOUNT}/lib`,
} as const;

/** argv running a script with the kit's shell (busybox ash, its applets before anything of the image). */
export function kitShell(script: string, ...args: string[]): string[] {
  return [KIT_PATHS.busybox, 'sh', '-c', script, ...args];
}

/** Where a qemu guest's agent listens: the virtio-serial port QEMU names org.qemu.guest_agent.0. */
export const GUEST_AGENT_PORT = 'org.qemu.guest_agent.0';
