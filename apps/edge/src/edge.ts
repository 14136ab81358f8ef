import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { createSecureContext, type SecureContext } from 'node:tls';
import { type ArborConfig, vmNameSuffix } from '@arbor/application';
import type { EventStore } from '@arbor/event-store';
import type { ReadModelStore } from '@arbor/read-models';
import { enterHttp } from './http-entrance';
import type { EdgeRouting } from './proxy/route-connection';
import { KEEPALIVE_IDLE_MS, OpenConnections } from './routing/open-connections';
import { RouteChanges } from './routing/route-changes';
import { RouteTable } from './routing/route-table';
import { enterTls } from './tls-entrance';
import { type EdgeCertificate, loadEdgeCertificate } from './tls/edge-certificate';
import { type Log, silentLog } from '@arbor/observability';

/** How often the edge checks whether its certificate is due again (a certificate of Arbor's CA is renewed 30 days ahead). */
const CERTIFICATE_CHECK_MS = 12 * 3_600_000;
/** Connections one edge process holds at once; past it new ones wait in the listen backlog. */
const MAX_CONNECTIONS = 20_000;

export interface EdgeStores {
  eventStore: EventStore;
  readModels: ReadModelStore;
}

export interface EdgeOptions {
  /**
   * Every commit to the read models goes through `stores.readModels` in this process (the
   * embedded service, whose projector is their only writer): the edge then knows their
   * checkpoint from the commits themselves and routes a remembered VM without asking the store
   * (see RouteTable). Left unset (a separate edge), it asks for the checkpoint per connection.
   */
  readModelsCommittedHere?: boolean;
}

/**
 * The edge: a TLS-terminating proxy into VMs (apps/edge). Stateless: it routes by the read models
 * (what it remembers of them, the log keeps exact) and follows the log to forget routes and end
 * connections a change makes wrong, so any number may run.
 */
export class Edge {
  private certificate!: EdgeCertificate;
  private secureContext!: SecureContext;
  private readonly servers: Server[] = [];
  private readonly sockets = new Set<Socket>();
  private readonly connections = new OpenConnections();
  private readonly changes: RouteChanges;
  private readonly routes: RouteTable;
  private readonly routing: EdgeRouting;
  private renewal: NodeJS.Timeout | null = null;
  private keepAlive: NodeJS.Timeout | null = null;
  tlsPort = 0;
  httpPort: number | null = null;

  private constructor(
    private readonly config: ArborConfig,
    stores: EdgeStores,
    private readonly log: Log,
    options: EdgeOptions,
  ) {
    this.routes = new RouteTable(stores.readModels, { readModelsCommittedHere: options.readModelsCommittedHere });
    this.routing = { routes: this.routes, connections: this.connections, vmSuffix: vmNameSuffix(config.edge), log };
    this.changes = new RouteChanges(stores.eventStore, this.connections, this.routes, log);
  }

  static async start(config: ArborConfig, stores: EdgeStores, log: Log = silentLog, options: EdgeOptions = {}): Promise<Edge> {
    const edge = new Edge(config, stores, log, options);
    await edge.loadCertificate();
    await edge.routes.start();
    await edge.changes.start();
    const settings = config.edge;
    edge.tlsPort = await edge.listen(settings.tlsPort, (socket) => enterTls(socket, () => edge.secureContext, edge.routing));
    if (settings.httpPort !== null) edge.httpPort = await edge.listen(settings.httpPort, (socket) => enterHttp(socket, edge.routing));
    edge.renewal = setInterval(() => void edge.loadCertificate().catch((error) => log.error(`edge: renewing the certificate failed: ${(error as Error).message}`)), CERTIFICATE_CHECK_MS);
    edge.renewal.unref();
    edge.keepAlive = setInterval(() => edge.connections.keepAliveLasting(), KEEPALIVE_IDLE_MS);
    edge.keepAlive.unref();
    return edge;
  }

  /** The CA certificate clients trust (Arbor's own CA), or null when the operator gave the certificate. */
  get caFile(): string | null {
    return this.certificate.caFile;
  }

  get openConnections(): number {
    return this.connections.size;
  }

  /** Stops listening and ends every connection still open. */
  async stop(): Promise<void> {
    if (this.renewal) clearInterval(this.renewal);
    if (this.keepAlive) clearInterval(this.keepAlive);
    const closed = this.servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve())));
    this.connections.closeAll();
    this.sockets.forEach((socket) => socket.destroy());
    await Promise.all(closed);
    await this.changes.stop();
    this.routes.stop();
  }

  private async loadCertificate(): Promise<void> {
    const certificate = await loadEdgeCertificate(this.config.edge, this.config.dataDir);
    if (this.certificate?.cert === certificate.cert) return;
    this.secureContext = createSecureContext({ key: certificate.key, cert: certificate.cert, minVersion: 'TLSv1.2' });
    this.certificate = certificate;
  }

  private listen(port: number, enter: (socket: Socket) => Promise<void> | void): Promise<number> {
    const failed = (socket: Socket, error: unknown) => {
      this.log.warn(`edge: a connection failed: ${(error as Error).message}`);
      socket.destroy();
    };
    const server = createServer({ allowHalfOpen: true, noDelay: true }, (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => socket.destroy());
      try {
        enter(socket)?.catch((error) => failed(socket, error));
      } catch (error) {
        failed(socket, error);
      }
    });
    server.maxConnections = MAX_CONNECTIONS;
    this.servers.push(server);
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      const host = this.config.edge.host;
      const onListening = () => {
        server.off('error', reject);
        resolve((server.address() as AddressInfo).port);
      };
      if (host) server.listen(port, host, onListening);
      else server.listen(port, onListening);
    });
  }
}
