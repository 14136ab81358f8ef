import type { Socket } from 'node:net';
import { decideHttpHead, splitHostPort } from './http/http-head';
import { readFirstBytes } from './proxy/first-bytes';
import { guarded, refuse, routeConnection, type EdgeRouting } from './proxy/route-connection';
import { edgeName } from './routing/edge-names';
import { HANDSHAKE_TIMEOUT_MS, HTTP_PORT } from './tls-entrance';

/**
 * One connection on the edge's plain HTTP port, routed by the Host of its first request: a custom
 * domain to the VM's port 80 (where, for instance, an ACME HTTP-01 challenge for the domain's own
 * certificate is answered), `<vm_id>.vm.<domain>[:<port>]` to that port of the VM (80 without one).
 * The connection stays with that VM for every request it carries.
 */
export function enterHttp(socket: Socket, routing: EdgeRouting): void {
  readFirstBytes(socket, decideHttpHead, { timeoutMs: HANDSHAKE_TIMEOUT_MS }, (first) => guarded(socket, routing, () => {
    const head = first.decision;
    if (head === undefined || head.kind === 'not_http') return void socket.destroy();
    if (head.kind === 'bad_request') return refuse(socket, 'http', head.reason.includes('larger') ? 431 : 400, head.reason, routing);
    if (head.host === null) return refuse(socket, 'http', 400, 'a Host header is required', routing);
    const { host, port } = splitHostPort(head.host);
    const name = edgeName(host, routing.vmSuffix);
    if (name === null) return refuse(socket, 'http', 404, `no VM is named ${host}`, routing);
    if (name.kind === 'vm' && Number.isNaN(port)) return refuse(socket, 'http', 400, `${head.host} names no valid port`, routing);
    routeConnection(socket, name, name.kind === 'vm' ? (port ?? HTTP_PORT) : HTTP_PORT, first.bytes, 'http', routing);
  }));
}
