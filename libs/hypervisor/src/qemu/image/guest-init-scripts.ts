import { guestServicesInit, SSHD_ARGV } from '../../guest-ssh';

/**
 * The two small programs that boot the guest. Not systemd: a shell + perl init reaches a working
 * guest agent in about 6.5 s under TCG where systemd needs about 26 s.
 */

/** Virtio devices the initramfs must load (they stay loaded); the cloud kernel builds them as modules (ext4 is built in). */
export const INITRAMFS_MODULES = ['virtio_pci', 'virtio_blk', 'virtio_console', 'virtio_net'];

/** Where the guest agent listens: the virtio-serial port QEMU names org.qemu.guest_agent.0. */
export const GUEST_AGENT_PORT = 'org.qemu.guest_agent.0';

/**
 * initramfs /init (busybox-static): load the virtio modules listed in /modules (dependencies
 * first), mount the ext4 disk and switch_root into it.
 */
export const INITRAMFS_INIT = `#!/bin/busybox sh
/bin/busybox --install -s /bin
mkdir -p /proc /sys /dev /newroot
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for module in $(cat /modules); do insmod "/lib/modules/$module" || echo "initramfs: insmod $module failed"; done
for i in $(seq 200); do [ -b /dev/vda ] && break; sleep 0.05; done
mount -t ext4 -o rw /dev/vda /newroot || { echo "initramfs: cannot mount /dev/vda"; exec sh; }
umount /proc /sys
mount --move /dev /newroot/dev
exec switch_root /newroot /sbin/arbor-init
`;

/**
 * The guest's PID 1: mounts the API filesystems, sets the hostname, grows the root filesystem to
 * the disk (a no-op when it already fills it), then becomes the supervisor of guest-ssh.ts, which
 * keeps qemu-ga and sshd running and reaps every orphan. The network is configured by the driver,
 * through the agent, once the machine's addresses are known (they change with every restore).
 */
export const GUEST_INIT = `#!/bin/sh
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
mountpoint -q /proc || mount -t proc proc /proc
mountpoint -q /sys || mount -t sysfs sysfs /sys
mountpoint -q /dev || mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs -o mode=0755 tmpfs /run
mount -t tmpfs -o mode=1777 tmpfs /tmp
# No udev: name the virtio-serial ports the way its rules would (/dev/virtio-ports/<name>).
mkdir -p /dev/virtio-ports
for port in /sys/class/virtio-ports/*; do
  [ -r "$port/name" ] && ln -sf "../\${port##*/}" "/dev/virtio-ports/$(cat "$port/name")"
done
[ -s /etc/hostname ] && cat /etc/hostname > /proc/sys/kernel/hostname
resize2fs /dev/vda >/dev/null 2>&1
${guestServicesInit([['/usr/sbin/qemu-ga', '--method=virtio-serial', `--path=/dev/virtio-ports/${GUEST_AGENT_PORT}`], SSHD_ARGV])}`;
