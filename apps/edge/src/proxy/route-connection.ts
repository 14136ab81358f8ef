import type { Duplex } from 'node:stream';
import { httpRefusal } from '../http/http-head';
import { sshRefusal } from '../ssh/ssh-refusal';
import type { EdgeName } from '../routing/edge-names';
import type { OpenConnections } from '../routing/open-connections';
import type { RouteTable } from '../routing/route-table';
import { connectUpstream, splice, UpstreamError } from './upstream';
import type { Log } from '@arbor/observability';

/** What every entrance routes with. */
export interface EdgeRouting {
  routes: RouteTable;
  connections: OpenConnections;
  /** `.vm.<edge domain>`: the end of every VM's own name. */
  vmSuffix: string;
  log: Log;
}

/**
 * How the client hears that its connection goes nowhere: an HTTP answer when it spoke HTTP, an
 * SSH disconnect with the reason on the SSH port (see sshRefusal), else (TLS passed through to a
 * custom domain's VM, which only the VM can answer) the connection ends.
 */
export type Refusal = 'http' | 'ssh' | 'close';

/**
 * Sends one connection on to `port` of the VM `name` routes to: the route (refused with its reason
 * when the VM does not exist or does not run), the connection to the VM's address, then the
 * bytes both ways. The connection is tracked, so the VM's deletion or the domain's removal ends it.
 */
export async function routeConnection(client: Duplex, name: EdgeName, port: number, firstBytes: Buffer, refusal: Refusal, routing: EdgeRouting): Promise<void> {
  const route = await routing.routes.route(name);
  if (!route.ok) return refuse(client, refusal, route.status, route.reason, routing);
  if (client.destroyed) return;
  const connection = routing.connections.add(route.vm_id, name.kind === 'domain' ? name.domain : null, client);
  let upstream;
  try {
    upstream = await connectUpstream(route.address, port, `vm ${route.vm_id}`);
  } catch (error) {
    if (!(error instanceof UpstreamError)) throw error;
    return refuse(client, refusal, error.status, error.message, routing);
  }
  if (client.destroyed) {
    upstream.destroy(); // closed meanwhile: its VM is going, or the client went
    return;
  }
  routing.connections.attach(connection, upstream);
  splice(client, upstream, firstBytes);
}

/** Refuses the connection with its reason, in the client's protocol, and logs it (at info: a user was turned away). */
export function refuse(client: Duplex, refusal: Refusal, status: number, reason: string, routing: Pick<EdgeRouting, 'log'>): void {
  routing.log.info(`edge: refused ${refusal === 'close' ? 'a' : `an ${refusal.toUpperCase()}`} connection (${status}): ${reason}`);
  if (refusal === 'close' || client.destroyed) return void client.destroy();
  setTimeout(() => client.destroy(), 2000).unref(); // the answer's bytes have gone by then, whatever the client does
  if (refusal === 'http') return void client.end(httpRefusal(status, reason));
  // An SSH client writes its key exchange after reading the edge's version line: a connection
  // ended at once may be gone by then (a broken pipe the client reports instead of the reason). So
  // the edge leaves the ending to the client, which goes once it has read the disconnect, and drops
  // whatever it sends meanwhile.
  client.write(sshRefusal(reason));
  client.on('data', () => undefined);
  client.once('end', () => client.end());
}
