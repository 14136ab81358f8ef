# One image for the api, the projector and the vm-worker; docker-compose.yml picks the entry point.

# The source, and the commit it is, for GET /api/v1/system/version. Only this stage sees .git, so
# the image does not carry the repository. A GIT_HASH build arg wins (e.g. for a build from a
# tarball, or a git worktree whose .git is only a pointer); without either the hash is "unknown".
FROM node:20-bookworm AS source
ARG GIT_HASH=
WORKDIR /src
COPY . .
RUN if [ -n "$GIT_HASH" ]; then echo "$GIT_HASH"; \
    else git -c safe.directory='*' rev-parse HEAD 2>/dev/null || echo unknown; fi > /git-hash \
 && rm -rf .git

FROM node:20-bookworm
# The package lists go with the layer; the qemu image builder fetches them again if it needs them.
COPY scripts/install-debian-packages.sh /tmp/
RUN /tmp/install-debian-packages.sh sandbox qemu build images && rm -rf /var/lib/apt/lists/* /tmp/install-debian-packages.sh
WORKDIR /opt/arbor
COPY package.json package-lock.json .npmrc ./
RUN npm install --no-audit --no-fund
COPY --from=source /src/ ./
COPY --from=source /git-hash /tmp/git-hash
# scripts/write-build-info.js records GIT_HASH in dist/build-info.json.
RUN GIT_HASH="$(cat /tmp/git-hash)" npm run build && rm /tmp/git-hash
ENV ARBOR_DATA_DIR=/var/lib/arbor ARBOR_CACHE_DIR=/var/cache/arbor PORT=3000
CMD ["node", "dist/apps/api/src/main.js"]
