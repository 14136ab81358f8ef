import { resolve } from 'node:path';

/**
 * The edge (apps/edge): ARBOR_EDGE_DOMAIN, EDGE_PORT, EDGE_HTTP_PORT, EDGE_HOST,
 * ARBOR_EDGE_TLS_CERT and ARBOR_EDGE_TLS_KEY. The api reads the domain too (a custom domain may
 * not sit under the VMs' own names).
 */
export interface EdgeSettings {
  /** VMs are reached as `<vm_id>.vm.<domain>` (the Vers CLI derives `vm.X` from an api at `api.X`). */
  domain: string;
  /** TLS: SSH and VM ports by SNI `<vm_id>.vm.<domain>`, custom domains passed through (see defaultEdgePorts). */
  tlsPort: number;
  /** Plain HTTP of custom domains and VM names by Host header (see defaultEdgePorts); null: not served. */
  httpPort: number | null;
  /** The address both listen on (default: every address, IPv6 and IPv4). */
  host: string | null;
  /** A certificate (chain) and key for `*.vm.<domain>` given by the operator; null: Arbor's own CA issues one. */
  certFile: string | null;
  keyFile: string | null;
}

const DOMAIN = /^(?=.{1,200}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

function port(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > 65535) throw new Error(`${name} must be a TCP port, 0 for any free one (got "${raw}")`);
  return value;
}

/**
 * The ports the edge takes when EDGE_PORT / EDGE_HTTP_PORT are not set: the standard 443 and 80
 * when it runs in production (NODE_ENV=production) as root, the only user that may bind them
 * (the Vers CLI dials `<vm_id>.vm.<domain>:443`, so that is where production must be); 8443 and
 * 8080 otherwise, so a quick start as any user, or a root shell on a laptop, binds no privileged
 * port and meets no server already on 443.
 */
export function defaultEdgePorts(env: NodeJS.ProcessEnv, uid: number | null): { tls: number; http: number } {
  return env.NODE_ENV === 'production' && uid === 0 ? { tls: 443, http: 80 } : { tls: 8443, http: 8080 };
}

/** `uid`: the process's user (root may bind the standard ports; see defaultEdgePorts). */
export function loadEdgeSettings(env: NodeJS.ProcessEnv = process.env, uid: number | null = process.getuid?.() ?? null): EdgeSettings {
  const defaults = defaultEdgePorts(env, uid);
  const domain = (env.ARBOR_EDGE_DOMAIN || 'localhost').toLowerCase().replace(/\.$/, '');
  if (!DOMAIN.test(domain)) throw new Error(`ARBOR_EDGE_DOMAIN must be a host name such as example.com (got "${env.ARBOR_EDGE_DOMAIN}")`);
  const httpOff = env.EDGE_HTTP_PORT === 'off';
  const certFile = env.ARBOR_EDGE_TLS_CERT || null;
  const keyFile = env.ARBOR_EDGE_TLS_KEY || null;
  if ((certFile === null) !== (keyFile === null)) throw new Error('ARBOR_EDGE_TLS_CERT and ARBOR_EDGE_TLS_KEY go together: set both, or neither for a certificate from Arbor\'s own CA');
  return {
    domain,
    tlsPort: port(env, 'EDGE_PORT', defaults.tls),
    httpPort: httpOff ? null : port(env, 'EDGE_HTTP_PORT', defaults.http),
    host: env.EDGE_HOST || null,
    certFile: certFile && resolve(certFile),
    keyFile: keyFile && resolve(keyFile),
  };
}

/** The suffix every VM's own name ends with: `.vm.<domain>`. */
export function vmNameSuffix(settings: Pick<EdgeSettings, 'domain'>): string {
  return `.vm.${settings.domain}`;
}
