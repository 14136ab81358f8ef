#!/usr/bin/env bash
# Installs what Arbor needs on a fresh Debian 12 machine (as root) and starts the embedded service:
# api + projector + vm-worker in one process, data in ./data (ARBOR_DATA_DIR), port 3000 (PORT).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then echo "quickstart: run as root (VMs need namespaces, mounts and cgroups)" >&2; exit 1; fi
export DEBIAN_FRONTEND=noninteractive
if ! command -v debootstrap >/dev/null || ! command -v mkfs.btrfs >/dev/null || ! command -v ssh-keygen >/dev/null; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends debootstrap util-linux btrfs-progs openssh-client ca-certificates >/dev/null
fi
if ! command -v node >/dev/null; then
  echo "quickstart: Node.js 20 is required (apt-get install nodejs npm, or from nodejs.org)" >&2; exit 1
fi
npm install --no-audit --no-fund
exec npm start
