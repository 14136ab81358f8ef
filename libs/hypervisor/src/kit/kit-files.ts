import { GUEST_AGENT_PORT, KIT_MOUNT, KIT_PATHS } from './kit-paths';

/**
 * The kit's own files besides its programs: the machine's init, the start of its SSH server and
 * that server's settings. Every script runs on the kit's busybox and names each tool through it
 * ($bb), so nothing of the image is needed, and nothing of the image's (a /bin/mount of its own,
 * a missing /proc) changes what they do.
 */

/** Where the kit's sshd takes the SetEnv lines made from /etc/environment each time it starts. */
export const SSHD_ENVIRONMENT_CONF = '/run/arbor-sshd-environment.conf';
/** sshd's pid file: qemu's identity step waits for a new one after a key change. */
export const SSHD_PID_FILE = '/run/sshd.pid';
export const SSHD_LOG = '/var/log/sshd.log';

/**
 * Settings of the kit's sshd (Debian's OpenSSH): root logs in with the VM's own key
 * (GET /vm/{id}/ssh_key), never with a password; the machine's own host key; sftp (and so scp)
 * served inside sshd, which needs nothing of the image. No PAM: an image from elsewhere has no PAM
 * modules this sshd could load, so the variables of /etc/environment (which pam_env would read)
 * come through SetEnv instead (sshd-environment in arbor-guest.c), refreshed at every start.
 */
export const SSHD_CONFIG = `# Arbor's SSH server (the guest kit's, the same in every image).
Include ${SSHD_ENVIRONMENT_CONF}
Port 22
HostKey /etc/ssh/ssh_host_ed25519_key
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PrintMotd no
PidFile ${SSHD_PID_FILE}
Subsystem sftp internal-sftp
`;

/** Starts sshd in the foreground (its supervisor sees it exit) with the machine's environment. */
export const SSHD_START = `#!${KIT_PATHS.busybox} sh
${KIT_PATHS.helper} sshd-environment /etc/environment > ${SSHD_ENVIRONMENT_CONF}
exec ${KIT_PATHS.sshd} -D -f ${KIT_PATHS.sshdConfig} -E ${SSHD_LOG}
`;
export const SSHD_START_PATH = `${KIT_MOUNT}/libexec/sshd-start`;

/** The services each kind of machine runs, as `arbor-guest supervise` takes them. */
const SERVICES = {
  sandbox: `-- ${SSHD_START_PATH}`,
  qemu: `-- ${KIT_PATHS.qemuGa} --method=virtio-serial --path=/dev/virtio-ports/${GUEST_AGENT_PORT} --statedir=/run -- ${SSHD_START_PATH}`,
};

/**
 * The machine's init (`/.arbor/init qemu|sandbox`). On qemu it is PID 1 straight from the
 * initramfs: it mounts the API file systems, names the virtio-serial ports as udev would, sets the
 * hostname and grows the root file system to the disk. On both it then gives the image what the
 * SSH server needs (root and sshd accounts, /run/sshd, /var/log: an image from elsewhere may have
 * none of them; inside the machine, so the image's own symlinks resolve there) and becomes the
 * supervisor, which keeps the services running and reaps orphans as a PID 1 must.
 */
export const KIT_INIT = `#!${KIT_PATHS.busybox} sh
bb=${KIT_PATHS.busybox}
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
if [ "$1" = qemu ]; then
  for dir in /proc /sys /dev /run /tmp; do [ -d "$dir" ] || $bb mkdir -p "$dir"; done
  $bb mountpoint -q /proc || $bb mount -t proc proc /proc
  $bb mountpoint -q /sys || $bb mount -t sysfs sysfs /sys
  $bb mountpoint -q /dev || $bb mount -t devtmpfs devtmpfs /dev
  $bb mkdir -p /dev/pts /dev/shm
  $bb mount -t devpts devpts /dev/pts
  $bb mount -t tmpfs tmpfs /dev/shm
  $bb mount -t tmpfs -o mode=0755 tmpfs /run
  $bb mount -t tmpfs -o mode=1777 tmpfs /tmp
  $bb mkdir -p /dev/virtio-ports
  for port in /sys/class/virtio-ports/*; do
    [ -r "$port/name" ] && $bb ln -sf "../\${port##*/}" "/dev/virtio-ports/$($bb cat "$port/name")"
  done
  [ -s /etc/hostname ] && $bb cat /etc/hostname > /proc/sys/kernel/hostname
  ${KIT_PATHS.resize2fs} /dev/vda >/dev/null 2>&1
fi
$bb mkdir -p /etc /var/log /run/sshd
[ -d /root ] || $bb mkdir -m 0700 /root
$bb chmod 0755 /run/sshd
$bb grep -q '^root:' /etc/passwd 2>/dev/null || echo 'root:x:0:0:root:/root:/bin/sh' >> /etc/passwd
$bb grep -q '^root:' /etc/group 2>/dev/null || echo 'root:x:0:' >> /etc/group
if ! $bb grep -q '^sshd:' /etc/passwd; then
  uid=100
  while $bb cut -d: -f3 /etc/passwd | $bb grep -qx "$uid"; do uid=$((uid + 1)); done
  echo "sshd:x:$uid:65534:sshd privilege separation:/run/sshd:/bin/false" >> /etc/passwd
fi
case "$1" in
  qemu) exec ${KIT_PATHS.helper} supervise ${SERVICES.qemu} ;;
  *) exec ${KIT_PATHS.helper} supervise ${SERVICES.sandbox} ;;
esac
`;
