import { createHash } from 'node:crypto';
import type { LookupFunction } from 'node:net';
import type { Agent } from 'undici';
import { writeBodyToFile } from '../download/write-body-to-file';
import { formatImageReference, type ImageReference } from './image-reference';
import { parseChallenge } from './www-authenticate';

export interface RegistryClientOptions {
  /** Registries (host[:port]) spoken to over plain HTTP: test and in-house registries. Every other over HTTPS. */
  insecureRegistries?: readonly string[];
  /**
   * Called before every request with its URL (the registry, its token service, a blob's redirect
   * target); throwing refuses it. The worker refuses private addresses here (the user chooses the URL).
   */
  checkUrl?: (url: URL) => Promise<void>;
  /**
   * Resolves the names the client connects to (dns.lookup's shape). The worker's drops private
   * addresses: checked at the connection itself, a name cannot pass checkUrl with a public address
   * and then connect to a private one (DNS rebinding).
   */
  lookup?: LookupFunction;
  /** How long one manifest or token request may take (a blob's download is bounded by its idle time instead). */
  requestTimeoutMs?: number;
}

/** A layer of an image: its digest, size and media type, as its manifest lists it. */
export interface LayerDescriptor {
  digest: string;
  size: number;
  mediaType: string;
}

/** The one manifest (linux/amd64) of an image: its layers, bottom first, and the config's digest. */
export interface ResolvedManifest {
  /** The digest of the platform manifest (what `@sha256:…` would pin). */
  digest: string;
  config: LayerDescriptor;
  layers: LayerDescriptor[];
}

const INDEX_TYPES = ['application/vnd.oci.image.index.v1+json', 'application/vnd.docker.distribution.manifest.list.v2+json'];
const MANIFEST_TYPES = ['application/vnd.oci.image.manifest.v1+json', 'application/vnd.docker.distribution.manifest.v2+json'];
const LAYER_TYPES = new Set([
  'application/vnd.oci.image.layer.v1.tar',
  'application/vnd.oci.image.layer.v1.tar+gzip',
  'application/vnd.oci.image.layer.v1.tar+zstd',
  'application/vnd.docker.image.rootfs.diff.tar.gzip',
  'application/vnd.docker.image.rootfs.diff.tar',
]);
/** A manifest is small; more than this is no manifest. */
const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;
const MAX_REDIRECTS = 5;
/** A blob's whole download (a stall is caught sooner, by its idle timeout). */
const BLOB_TIMEOUT_MS = 6 * 3600_000;

/**
 * A client of the Docker Registry HTTP API v2 / OCI distribution spec, on Node's fetch: anonymous
 * access and the bearer-token flow (a 401's `WWW-Authenticate: Bearer realm=…,service=…` answered
 * with a token for `repository:<name>:pull` from that realm), manifest lists and OCI indexes
 * narrowed to linux/amd64, every manifest fetched by digest checked against it, blobs streamed to
 * files and checked against their digests. Redirects (blob storage behind a CDN) are followed by
 * hand, each target checked, the registry's token never sent to another host.
 */
export class RegistryClient {
  private readonly insecure: Set<string>;
  /** Bearer tokens by registry and repository. */
  private readonly tokens = new Map<string, string>();
  /** undici's connection pool, when connections resolve names with `lookup` (fetch's own cannot be given one). */
  private readonly dispatcher: Agent | undefined;

  constructor(private readonly options: RegistryClientOptions = {}) {
    this.insecure = new Set((options.insecureRegistries ?? []).map((host) => host.toLowerCase()));
    // undici is loaded only for such a client: it is slow to load, and most processes never pull an image.
    this.dispatcher = options.lookup ? new (require('undici') as typeof import('undici')).Agent({ connect: { lookup: options.lookup } }) : undefined;
  }

  /** Closes the client's connections. */
  async close(): Promise<void> {
    await this.dispatcher?.close();
  }

  /** The linux/amd64 manifest of the image (through its index, if it has one). */
  async resolveManifest(ref: ImageReference): Promise<ResolvedManifest> {
    const top = await this.manifest(ref, ref.digest ?? ref.tag!);
    let manifest = top;
    if (INDEX_TYPES.includes(top.mediaType)) {
      const entries = (top.json.manifests ?? []) as { digest: string; mediaType?: string; platform?: { os?: string; architecture?: string } }[];
      const chosen = entries.find((entry) => entry.platform?.os === 'linux' && entry.platform?.architecture === 'amd64');
      if (!chosen) {
        const platforms = entries.map((entry) => `${entry.platform?.os ?? '?'}/${entry.platform?.architecture ?? '?'}`).join(', ');
        throw new Error(`${formatImageReference(ref)} has no linux/amd64 image (it has: ${platforms || 'none'})`);
      }
      manifest = await this.manifest(ref, chosen.digest);
    }
    if (!MANIFEST_TYPES.includes(manifest.mediaType)) {
      throw new Error(`${formatImageReference(ref)}: manifest of type '${manifest.mediaType}' is not supported (OCI or Docker schema 2 images are)`);
    }
    const config = manifest.json.config as LayerDescriptor | undefined;
    const layers = (manifest.json.layers ?? []) as LayerDescriptor[];
    if (!config?.digest) throw new Error(`${formatImageReference(ref)}: the manifest names no config`);
    for (const layer of layers) {
      if (!LAYER_TYPES.has(layer.mediaType)) throw new Error(`${formatImageReference(ref)}: layer ${layer.digest} is of type '${layer.mediaType}', which Arbor cannot unpack`);
      if (!Number.isSafeInteger(layer.size) || layer.size < 0) throw new Error(`${formatImageReference(ref)}: layer ${layer.digest} has no size`);
    }
    return { digest: manifest.digest, config, layers };
  }

  /** A small JSON blob (the image config), checked against its digest. */
  async blobJson(ref: ImageReference, descriptor: LayerDescriptor): Promise<unknown> {
    const response = await this.get(ref, `/blobs/${descriptor.digest}`, {});
    const body = await readBounded(response, MAX_MANIFEST_BYTES, `config ${descriptor.digest}`);
    verify(body, descriptor.digest, `config of ${formatImageReference(ref)}`);
    return JSON.parse(body.toString('utf8'));
  }

  /** Streams a blob into `file`; its bytes must hash to its digest and be no more than `maxBytes`. */
  async downloadBlob(ref: ImageReference, layer: LayerDescriptor, file: string, options: { maxBytes: number; onBytes?: (bytes: number) => void; signal?: AbortSignal }): Promise<void> {
    const response = await this.get(ref, `/blobs/${layer.digest}`, {}, BLOB_TIMEOUT_MS, options.signal);
    if (!response.body) throw new Error(`layer ${layer.digest}: the registry sent no content`);
    const maxBytes = Math.min(options.maxBytes, layer.size);
    await writeBodyToFile(response.body as AsyncIterable<Uint8Array>, file, { maxBytes, digest: layer.digest, onBytes: options.onBytes, what: `layer ${layer.digest}` });
  }

  private async manifest(ref: ImageReference, reference: string): Promise<{ digest: string; mediaType: string; json: Record<string, any> }> {
    const accept = [...INDEX_TYPES, ...MANIFEST_TYPES].join(', ');
    const response = await this.get(ref, `/manifests/${reference}`, { accept });
    const body = await readBounded(response, MAX_MANIFEST_BYTES, `manifest ${reference}`);
    const digest = `sha256:${createHash('sha256').update(body).digest('hex')}`;
    if (reference.includes(':')) verify(body, reference, `manifest of ${formatImageReference(ref)}`);
    let json: Record<string, any>;
    try {
      json = JSON.parse(body.toString('utf8'));
    } catch {
      throw new Error(`${formatImageReference(ref)}: the registry's manifest is not JSON`);
    }
    if (json.schemaVersion === 1) throw new Error(`${formatImageReference(ref)}: schema 1 manifests are not supported (push the image again with a current tool)`);
    const mediaType = (json.mediaType as string | undefined) ?? response.headers.get('content-type')?.split(';')[0].trim() ?? '';
    return { digest, mediaType, json };
  }

  /** GET `/v2/<repository><path>`, with the bearer-token flow on a 401 and redirects followed by hand. */
  private async get(ref: ImageReference, path: string, headers: { accept?: string }, timeoutMs = this.options.requestTimeoutMs ?? 60_000, signal?: AbortSignal): Promise<Response> {
    const scheme = this.insecure.has(ref.apiHost.toLowerCase()) ? 'http' : 'https';
    const url = new URL(`${scheme}://${ref.apiHost}/v2/${ref.repository}${path}`);
    const tokenKey = `${ref.apiHost}/${ref.repository}`;
    for (let attempt = 0; ; attempt++) {
      const token = this.tokens.get(tokenKey);
      const response = await this.follow(url, { ...(headers.accept ? { accept: headers.accept } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) }, timeoutMs, signal);
      if (response.status === 401 && attempt === 0) {
        await response.body?.cancel();
        this.tokens.set(tokenKey, await this.token(ref, response.headers.get('www-authenticate')));
        continue;
      }
      if (response.ok) return response;
      const detail = (await readBounded(response, 4096, 'error').catch(() => Buffer.alloc(0))).toString('utf8').trim();
      if (response.status === 404) throw new Error(`${formatImageReference(ref)} not found in its registry (${path.split('/')[1].replace(/s$/, '')} ${path.split('/')[2]})`);
      if (response.status === 401 || response.status === 403) throw new Error(`${formatImageReference(ref)}: the registry refused access (${response.status}); only public images can be pulled`);
      throw new Error(`${formatImageReference(ref)}: the registry answered ${response.status}${detail ? `: ${detail.slice(0, 300)}` : ''}`);
    }
  }

  /** A pull token from the challenge's realm (anonymous). */
  private async token(ref: ImageReference, header: string | null): Promise<string> {
    const challenge = header ? parseChallenge(header) : null;
    if (!challenge || challenge.scheme !== 'bearer' || !challenge.params.realm) {
      throw new Error(`${formatImageReference(ref)}: the registry asks for credentials Arbor does not have (${header ?? 'no challenge'})`);
    }
    const realm = new URL(challenge.params.realm);
    // A registry spoken to over plain HTTP may name a plain-HTTP token service; any other, HTTPS only.
    const plainAllowed = this.insecure.has(ref.apiHost.toLowerCase()) || this.insecure.has(realm.host.toLowerCase());
    if (realm.protocol !== 'https:' && !(realm.protocol === 'http:' && plainAllowed)) {
      throw new Error(`${formatImageReference(ref)}: the token service ${realm.origin} is not HTTPS`);
    }
    if (challenge.params.service) realm.searchParams.set('service', challenge.params.service);
    realm.searchParams.set('scope', `repository:${ref.repository}:pull`);
    const response = await this.follow(realm, { accept: 'application/json' }, this.options.requestTimeoutMs ?? 60_000);
    if (!response.ok) throw new Error(`${formatImageReference(ref)}: the token service answered ${response.status}`);
    const body = JSON.parse((await readBounded(response, 1024 * 1024, 'token')).toString('utf8')) as { token?: string; access_token?: string };
    const token = body.token ?? body.access_token;
    if (!token) throw new Error(`${formatImageReference(ref)}: the token service sent no token`);
    return token;
  }

  /** One request, its redirects followed by hand: each target checked; credentials kept to the first origin. */
  private async follow(start: URL, headers: Record<string, string>, timeoutMs: number, signal?: AbortSignal): Promise<Response> {
    let url = start;
    for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
      await this.options.checkUrl?.(url);
      const sameOrigin = url.origin === start.origin;
      const sent = sameOrigin ? headers : Object.fromEntries(Object.entries(headers).filter(([name]) => name !== 'authorization'));
      const response = await fetch(url, {
        headers: sent,
        redirect: 'manual',
        signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs),
        dispatcher: this.dispatcher,
      }).catch((error: Error) => {
        // fetch says only "fetch failed"; why (refused, unresolvable, refused by `lookup`) is its cause.
        const cause = (error.cause as Error | undefined)?.message;
        throw cause ? new Error(`${url.host}: ${cause}`, { cause: error }) : error;
      });
      if (response.status < 300 || response.status >= 400 || !response.headers.get('location')) return response;
      await response.body?.cancel();
      const next = new URL(response.headers.get('location')!, url);
      if (next.protocol !== 'https:' && next.protocol !== 'http:') throw new Error(`the registry redirected to ${next.protocol}, which is not HTTP`);
      if (next.protocol === 'http:' && url.protocol === 'https:') throw new Error(`the registry redirected from HTTPS to plain HTTP (${next.origin})`);
      url = next;
    }
    throw new Error(`more than ${MAX_REDIRECTS} redirects from ${start.origin}`);
  }
}

async function readBounded(response: Response, maxBytes: number, what: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  if (!response.body) return Buffer.alloc(0);
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    bytes += chunk.length;
    if (bytes > maxBytes) throw new Error(`${what} is larger than ${maxBytes} bytes`);
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}

function verify(body: Buffer, digest: string, what: string): void {
  const [algorithm, hex] = digest.split(':');
  if (algorithm !== 'sha256') throw new Error(`${what}: digest ${digest} cannot be verified (only sha256 digests are)`);
  const actual = createHash('sha256').update(body).digest('hex');
  if (actual !== hex) throw new Error(`${what}: the content's digest is sha256:${actual}, not ${digest} (corrupt or tampered with)`);
}
