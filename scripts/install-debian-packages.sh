#!/bin/sh
# The Debian packages Arbor needs, by purpose, in one place; installs the ones missing (apt-get
# update only when something is). Used by the quick start, CI and the qemu image builder.
# Usage: scripts/install-debian-packages.sh sandbox qemu edge build
set -eu
packages=""
for purpose in "$@"; do
  case "$purpose" in
    # sandbox driver: runc runs its machines (OCI runtime); debootstrap builds its base root
    # filesystem; btrfs-progs its machine disks; util-linux losetup/findmnt/nsenter; openssh-client
    # ssh and ssh-keygen, which the tests reach and check machines with (host keys are made
    # in-process; host locks are held by perl, which every Debian has); iproute2 and nftables the
    # machines' networks (bridge, veth/tap ports, isolation and NAT rules).
    sandbox) packages="$packages runc debootstrap util-linux btrfs-progs openssh-client ca-certificates iproute2 nftables" ;;
    # qemu driver: the emulator and qemu-img; debootstrap, busybox-static, cpio and e2fsprogs build
    # its guest image (root disk, initramfs); iproute2 and nftables the machines' networks.
    qemu) packages="$packages qemu-system-x86 qemu-utils debootstrap busybox-static cpio e2fsprogs iproute2 nftables openssh-client" ;;
    # the edge's tests and its users: openssl s_client is the ssh ProxyCommand into a VM over
    # TLS, ssh the client, curl for HTTPS to VMs; iproute2 puts test addresses on loopback.
    edge) packages="$packages openssl openssh-client curl iproute2" ;;
    # node-gyp compiles better-sqlite3 when its prebuilt binary cannot be downloaded.
    build) packages="$packages python3 make g++" ;;
    *) echo "install-debian-packages: unknown purpose '$purpose' (sandbox, qemu, edge, build)" >&2; exit 2 ;;
  esac
done

missing=""
for package in $packages; do
  case " $missing " in *" $package "*) continue ;; esac
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $package"
done
if [ -n "$missing" ]; then
  echo "installing Debian packages:$missing"
  apt-get update -qq
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
