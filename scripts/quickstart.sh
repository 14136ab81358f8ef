#!/usr/bin/env bash
# Installs what Arbor needs on a fresh Debian 12 machine (as root) and starts the embedded service:
# api + projector + vm-worker in one process, data in ./data (ARBOR_DATA_DIR), port 3000 (PORT).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then echo "quickstart: run as root (VMs need namespaces, mounts and cgroups)" >&2; exit 1; fi

# Node first, so a missing one fails before anything is installed. Not installed for you: Debian 12's
# own nodejs package is 18, too old, and adding a package source is the machine owner's call.
need_node() {
  echo "quickstart: $1; Arbor needs Node.js >= 20.19 (with npm). Debian 12's apt nodejs is 18: install" >&2
  echo "  Node 22 LTS from NodeSource:  curl -fsSL https://deb.nodesource.com/setup_22.x | bash - && apt-get install -y nodejs" >&2
  echo "  or a binary from https://nodejs.org/en/download, then run this script again." >&2
  exit 1
}
command -v node >/dev/null || need_node "node not found"
node_version=$(node -p 'process.versions.node')
IFS=. read -r node_major node_minor _ <<<"$node_version"
if [ "$node_major" -lt 20 ] || { [ "$node_major" -eq 20 ] && [ "$node_minor" -lt 19 ]; }; then
  need_node "node $node_version is too old"
fi
command -v npm >/dev/null || need_node "node $node_version has no npm"

# sandbox driver: debootstrap, util-linux, btrfs-progs, openssh-client (machine SSH keys);
# qemu driver (chosen where KVM works, and what `npm test` also exercises): qemu-system-x86,
# qemu-utils, busybox-static, cpio, e2fsprogs;
# python3, make, g++: node-gyp builds better-sqlite3 when its prebuilt binary cannot be downloaded.
packages="debootstrap util-linux btrfs-progs openssh-client ca-certificates qemu-system-x86 qemu-utils busybox-static cpio e2fsprogs python3 make g++"
missing=""
for package in $packages; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $package"
done
if [ -n "$missing" ]; then
  echo "quickstart: installing$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # shellcheck disable=SC2086
  apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

npm install --no-audit --no-fund
exec npm start
