import 'reflect-metadata';
import { closeInfrastructure, openInfrastructure, runArborProcess } from '@arbor/application';
import { infoLines } from '@arbor/observability';
import { announceEdge } from './announce-edge';
import { Edge } from './edge';

/**
 * `npm run start:edge`: the TLS edge into VMs alone (run any number of them, like the api).
 * Dials out to the event store and the read models; listens on EDGE_PORT (and EDGE_HTTP_PORT).
 */
runArborProcess('edge', async (config, log) => {
  const infra = await openInfrastructure(config, infoLines(log));
  const edge = await Edge.start(config, infra);
  announceEdge(edge, config, log);
  return async () => {
    await edge.stop();
    await closeInfrastructure(infra);
  };
});
