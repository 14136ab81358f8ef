#!/bin/sh
# Builds the QEMU driver's base image (Debian cloud kernel, busybox initramfs, minbase root disk
# as qcow2) into $ARBOR_CACHE_DIR/qemu (default /var/cache/arbor), installing the Debian packages
# it needs first. Safe to run again: a built image is reused; concurrent runs wait on a lock.
# The driver builds the same image on first use (prepare()); CI runs this to pay the cost up front.
set -eu
cd "$(dirname "$0")/.."

PACKAGES="qemu-system-x86 qemu-utils debootstrap busybox-static cpio e2fsprogs"
missing=""
for package in $PACKAGES; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $package"
done
if [ -n "$missing" ]; then
  echo "qemu image: installing$missing"
  apt-get update
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing
fi
# The kernel is fetched with `apt-get download`: the package lists must know it.
apt-cache show linux-image-cloud-amd64 >/dev/null 2>&1 || apt-get update

[ "${SKIP_BUILD:-}" = 1 ] || npm run build
exec node dist/libs/hypervisor/src/qemu/image/build-qemu-image.js
