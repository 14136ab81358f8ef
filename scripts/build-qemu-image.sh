#!/bin/sh
# Builds the QEMU driver's base image (Debian cloud kernel, busybox initramfs, minbase root disk
# as qcow2) into $ARBOR_CACHE_DIR/qemu (default /var/cache/arbor), installing the Debian packages
# it needs first. Safe to run again: a built image is reused; concurrent runs wait on a lock.
# The driver builds the same image on first use (prepare()); CI runs this to pay the cost up front.
set -eu
cd "$(dirname "$0")/.."

./scripts/install-debian-packages.sh qemu

[ "${SKIP_BUILD:-}" = 1 ] || npm run build
exec node dist/libs/hypervisor/src/qemu/image/build-qemu-image.js
