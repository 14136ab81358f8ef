import type { Socket } from 'node:net';
import { type SecureContext, TLSSocket } from 'node:tls';
import { parseHttpHead, splitHostPort } from './http/http-head';
import { readFirstBytes } from './proxy/first-bytes';
import { refuse, routeConnection, type EdgeRouting } from './proxy/route-connection';
import { edgeName } from './routing/edge-names';
import { MAX_CLIENT_HELLO_BYTES, parseClientHello, UNRECOGNIZED_NAME_ALERT } from './tls/client-hello';

/** How long a client has for its ClientHello, its handshake, and its request head. */
export const HANDSHAKE_TIMEOUT_MS = 10_000;
/** A client that says nothing this long after its handshake is taken for SSH waiting on the server's banner. */
export const SILENT_CLIENT_MS = 1_500;
/** The VM port of SSH (what `GET /vm/{id}/ssh_key` answers as `ssh_port`). */
export const SSH_PORT = 22;
/** The VM port plain HTTP goes to when the client names none (its Host has no port). */
export const HTTP_PORT = 80;
/** The VM port a custom domain's TLS is passed through to. */
export const TLS_PORT = 443;

/**
 * One connection on the edge's TLS port. The ClientHello is read first, without answering it:
 * - SNI `<vm_id>.vm.<edge domain>` (or none): the edge ends TLS with its wildcard certificate,
 *   then reads what the client says. HTTP goes to the port its Host names (`<vm_id>.vm.<domain>:<port>`,
 *   port 80 without one); anything else (SSH, which the Vers CLI speaks) to port 22.
 * - SNI of a custom domain: passed through untouched to the VM's port 443, so the VM holds the
 *   domain's certificate and the edge never sees the traffic.
 * - any other name: a TLS `unrecognized_name` alert.
 */
export async function enterTls(socket: Socket, secureContext: () => SecureContext, routing: EdgeRouting): Promise<void> {
  const hello = await readFirstBytes(socket, (bytes) => {
    const parsed = parseClientHello(bytes);
    return parsed.kind === 'incomplete' && bytes.length <= MAX_CLIENT_HELLO_BYTES ? undefined : parsed;
  }, { timeoutMs: HANDSHAKE_TIMEOUT_MS });
  if (hello.decision?.kind !== 'hello') return void socket.destroy();
  const serverName = hello.decision.server_name;
  const name = serverName === null ? null : edgeName(serverName, routing.vmSuffix);
  if (serverName !== null && name === null) {
    routing.log.debug(`edge: no VM is named ${serverName}`);
    return void socket.end(UNRECOGNIZED_NAME_ALERT);
  }
  if (name?.kind === 'domain') return routeConnection(socket, name, TLS_PORT, hello.bytes, 'close', routing);

  // One of the VMs' own names (or no SNI, then the Host header decides): the edge ends TLS here.
  socket.unshift(hello.bytes);
  const tls = new TLSSocket(socket, { isServer: true, secureContext: secureContext() });
  tls.on('error', () => tls.destroy());
  const handshake = setTimeout(() => tls.destroy(), HANDSHAKE_TIMEOUT_MS);
  const secured = await new Promise<boolean>((resolve) => {
    tls.once('secure', () => resolve(true));
    tls.once('close', () => resolve(false));
  });
  clearTimeout(handshake);
  if (!secured) return;
  const first = await readFirstBytes(tls, (bytes) => {
    const head = parseHttpHead(bytes);
    return head.kind === 'incomplete' ? undefined : head;
  }, { timeoutMs: HANDSHAKE_TIMEOUT_MS, silentMs: SILENT_CLIENT_MS });
  if (tls.destroyed) return;
  const head = first.decision;
  if (head?.kind === 'head') {
    if (head.host === null && name === null) return refuse(tls, 'http', 400, 'a Host header (or TLS SNI) naming <vm_id>.vm.<domain> is required', routing);
    const { host, port } = splitHostPort(head.host ?? serverName!);
    const target = edgeName(host, routing.vmSuffix);
    if (target === null || target.kind !== 'vm') return refuse(tls, 'http', 404, `no VM is named ${host}`, routing);
    if (name !== null && name.vm_id !== target.vm_id) return refuse(tls, 'http', 421, `this connection is for ${serverName}, not ${host}`, routing);
    if (Number.isNaN(port)) return refuse(tls, 'http', 400, `${head.host} names no valid port`, routing);
    return routeConnection(tls, target, port ?? HTTP_PORT, first.bytes, 'http', routing);
  }
  if (head?.kind === 'bad_request') return refuse(tls, 'http', head.reason.includes('larger') ? 431 : 400, head.reason, routing);
  if (name === null) return void tls.destroy(); // neither SNI nor a Host: nothing names a VM
  if (head === undefined && first.bytes.length > 0) return void tls.destroy(); // a partial request head, then nothing
  return routeConnection(tls, name, SSH_PORT, first.bytes, 'ssh', routing);
}
