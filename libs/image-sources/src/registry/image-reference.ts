/** A parsed image reference: where the registry is, which repository, and which tag or digest. */
export interface ImageReference {
  /** As the user names it (`docker.io` for Docker Hub). */
  registry: string;
  /** Where its API answers (`registry-1.docker.io` for Docker Hub), host[:port]. */
  apiHost: string;
  repository: string;
  tag: string | null;
  digest: string | null;
}

const DOCKER_HUB = 'docker.io';
const REPOSITORY = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$/;
const TAG = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
const DIGEST = /^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]{32,}$/;
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$/;

/**
 * Parses a reference as Docker does: `[registry/]repository[:tag][@digest]`. The first component
 * names a registry when it holds a `.` or a `:` or is `localhost`; otherwise the image is on
 * Docker Hub, whose one-component names live under `library/`. No tag and no digest means `latest`.
 * Throws an Error whose message says what is wrong (the API answers it as a 400).
 */
export function parseImageReference(reference: string): ImageReference {
  const text = reference.trim();
  if (text === '' || text.length > 512) throw new Error('image_ref must be an image reference such as "debian:bookworm" or "registry.example.com/team/app@sha256:…"');
  let rest = text;
  let digest: string | null = null;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) throw new Error(`image_ref '${reference}': '${digest}' is not a digest (algorithm:hex)`);
  }
  const slash = rest.indexOf('/');
  const first = slash >= 0 ? rest.slice(0, slash) : '';
  const hasRegistry = slash >= 0 && (first.includes('.') || first.includes(':') || first === 'localhost');
  let registry = hasRegistry ? first : DOCKER_HUB;
  let remainder = hasRegistry ? rest.slice(slash + 1) : rest;
  if (hasRegistry && !HOST.test(registry)) throw new Error(`image_ref '${reference}': '${registry}' is not a registry host`);
  let tag: string | null = null;
  const colon = remainder.lastIndexOf(':');
  if (colon >= 0 && !remainder.slice(colon).includes('/')) {
    tag = remainder.slice(colon + 1);
    remainder = remainder.slice(0, colon);
    if (!TAG.test(tag)) throw new Error(`image_ref '${reference}': '${tag}' is not a tag`);
  }
  if (registry === 'index.docker.io') registry = DOCKER_HUB;
  if (registry === DOCKER_HUB && !remainder.includes('/')) remainder = `library/${remainder}`;
  if (!REPOSITORY.test(remainder)) throw new Error(`image_ref '${reference}': '${remainder}' is not a repository name (lowercase letters, digits, separators)`);
  if (tag === null && digest === null) tag = 'latest';
  return { registry, apiHost: registry === DOCKER_HUB ? 'registry-1.docker.io' : registry, repository: remainder, tag, digest };
}

/** The reference written out in full (for logs and messages). */
export function formatImageReference(ref: ImageReference): string {
  return `${ref.registry}/${ref.repository}${ref.tag ? `:${ref.tag}` : ''}${ref.digest ? `@${ref.digest}` : ''}`;
}
