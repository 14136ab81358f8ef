# One image for the api, the projector and the vm-worker; docker-compose.yml picks the entry point.
FROM node:20-bookworm
RUN apt-get update \
 && apt-get install -y --no-install-recommends debootstrap util-linux btrfs-progs openssh-client qemu-system-x86 qemu-utils busybox-static cpio e2fsprogs iproute2 ca-certificates python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/arbor
COPY package.json package-lock.json .npmrc ./
RUN npm install --no-audit --no-fund
COPY . .
ARG GIT_HASH=unknown
ENV GIT_HASH=${GIT_HASH}
RUN npm run build
ENV ARBOR_DATA_DIR=/var/lib/arbor ARBOR_CACHE_DIR=/var/cache/arbor PORT=3000
CMD ["node", "dist/apps/api/src/main.js"]
