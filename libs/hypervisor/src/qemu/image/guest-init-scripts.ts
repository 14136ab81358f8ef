/**
 * The initramfs that boots every qemu machine, whatever its image: Arbor's kernel and this small
 * busybox-static program mount the machine's root disk and the guest kit (kit/guest-kit.ts), then
 * hand over to the kit's init (kit/kit-files.ts), which needs nothing of the image. Not systemd:
 * a small init reaches a working guest agent in about 6.5 s under TCG where systemd needs about 26 s.
 */

/** Virtio devices the initramfs must load (they stay loaded); the cloud kernel builds them as modules (ext4 is built in). */
export const INITRAMFS_MODULES = ['virtio_pci', 'virtio_blk', 'virtio_console', 'virtio_net'];

/**
 * initramfs /init (busybox-static): load the virtio modules listed in /modules (dependencies
 * first), mount the root disk (vda) and, read-only over whatever the image keeps at /.arbor, the
 * guest kit's disk (vdb), then switch_root into the kit's init.
 */
export const INITRAMFS_INIT = `#!/bin/busybox sh
/bin/busybox --install -s /bin
mkdir -p /proc /sys /dev /newroot
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for module in $(cat /modules); do insmod "/lib/modules/$module" || echo "initramfs: insmod $module failed"; done
for i in $(seq 200); do [ -b /dev/vda ] && [ -b /dev/vdb ] && break; sleep 0.05; done
mount -t ext4 -o rw /dev/vda /newroot || { echo "initramfs: cannot mount /dev/vda"; exec sh; }
if [ -L /newroot/.arbor ] || { [ -e /newroot/.arbor ] && [ ! -d /newroot/.arbor ]; }; then rm -f /newroot/.arbor; fi
mkdir -p /newroot/.arbor /newroot/dev
mount -t ext4 -o ro,nosuid,nodev /dev/vdb /newroot/.arbor || { echo "initramfs: cannot mount the guest kit (/dev/vdb)"; exec sh; }
umount /proc /sys
mount --move /dev /newroot/dev
exec switch_root /newroot /.arbor/init qemu
`;
