import type { ArborConfig } from '@arbor/application';
import type { Log } from '@arbor/observability';
import type { Edge } from './edge';

/** Tells the operator where the edge listens, which names it serves, and which CA to trust. */
export function announceEdge(edge: Edge, config: ArborConfig, log: Log): void {
  const http = edge.httpPort === null ? 'no plain HTTP' : `HTTP on port ${edge.httpPort}`;
  log.info(`arbor edge: TLS on port ${edge.tlsPort}, ${http}; VMs are <vm_id>.vm.${config.edge.domain}`);
  if (edge.caFile) log.info(`arbor edge: certificates of Arbor's own CA: trust ${edge.caFile} (name-constrained to vm.${config.edge.domain})`);
}
