#!/bin/sh
# The Debian packages Arbor needs, by purpose, in one place; installs the ones missing (apt-get
# update only when something is). Used by the quick start, CI and the qemu image builder.
# Usage: scripts/install-debian-packages.sh sandbox qemu edge build images images-tests
set -eu
packages=""
for purpose in "$@"; do
  case "$purpose" in
    # sandbox driver: crun runs its machines (OCI runtime), runc where crun cannot (and the
    # machines started under it before crun was chosen); debootstrap builds its base root
    # filesystem; btrfs-progs its machine disks; util-linux losetup/findmnt/nsenter; openssh-client
    # ssh and ssh-keygen, which the tests reach and check machines with (host keys are made
    # in-process; host locks are held by perl, which every Debian has); iproute2 and nftables the
    # machines' networks (bridge, veth/tap ports, isolation and NAT rules); git the deploys' clones
    # (on the worker's host) and their ls-remote (on the api's). gcc, libc6-dev and patchelf build
    # the guest kit every machine runs from /.arbor (the static helper, Debian's sshd and qemu-ga
    # made to run in any root); busybox-static is in the kit and in the image tests' bare root.
    # strace shows the tests that machines and snapshots are fsynced into place.
    sandbox) packages="$packages crun runc debootstrap util-linux btrfs-progs openssh-client ca-certificates iproute2 nftables git gcc libc6-dev patchelf busybox-static strace" ;;
    # qemu driver: the emulator and qemu-img; debootstrap, busybox-static, cpio and e2fsprogs build
    # its guest image (root disk, initramfs) and images' disks; gcc, libc6-dev and patchelf the
    # guest kit (as for the sandbox); iproute2 and nftables the machines' networks; git the
    # deploys' clones.
    qemu) packages="$packages qemu-system-x86 qemu-utils debootstrap busybox-static cpio e2fsprogs iproute2 nftables openssh-client ca-certificates git gcc libc6-dev patchelf" ;;
    # the edge's tests and its users: openssl s_client is the ssh ProxyCommand into a VM over
    # TLS, ssh the client, curl for HTTPS to VMs; iproute2 puts test addresses on loopback;
    # haproxy is the edge benchmark's yardstick (a second hop in C, beside the bare Node proxy);
    # wrk the reads benchmark's (a load generator in C, beside the readers' Node client).
    edge) packages="$packages openssl openssh-client curl iproute2 haproxy wrk" ;;
    # node-gyp compiles better-sqlite3 when its prebuilt binary cannot be downloaded.
    build) packages="$packages python3 make g++" ;;
    # base images (POST /images): zstd decodes zstd-compressed layers and tarballs (Node 20 has no
    # decoder); ca-certificates for HTTPS registries and S3.
    images) packages="$packages zstd ca-certificates" ;;
    # the base images' tests and benchmarks: Debian's docker-registry (the reference registry),
    # skopeo pushes into it (and is the pull benchmark's yardstick), umoci beside it for OCI
    # layouts, busybox-static the bare root filesystem they upload.
    images-tests) packages="$packages docker-registry skopeo umoci busybox-static" ;;
    *) echo "install-debian-packages: unknown purpose '$purpose' (sandbox, qemu, edge, build, images, images-tests)" >&2; exit 2 ;;
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
