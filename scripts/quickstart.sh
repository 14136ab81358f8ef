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

# sandbox and qemu drivers (auto picks qemu where KVM works; npm test exercises both), the
# build tools better-sqlite3 may need, what base images need (zstd), and what the tests of both
# use (npm test: docker-registry, skopeo).
./scripts/install-debian-packages.sh sandbox qemu edge build images images-tests

npm install --no-audit --no-fund
exec npm start
