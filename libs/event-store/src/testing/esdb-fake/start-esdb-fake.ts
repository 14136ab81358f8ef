/**
 * An in-process stand-in for EventStoreDB that the REAL `@eventstore/db-client` talks to over a real
 * localhost gRPC socket, built from the service definitions shipped inside the client package.
 *
 * It checks OUR USE OF THE CLIENT (requests, responses, errors, subscriptions as they cross the
 * wire), not server semantics: it implements just Streams.Append and Streams.Read, keeps its state
 * in memory, and its expected-revision and idempotency rules are our reading of the real server's.
 * ServerFeatures is left unregistered: the client takes UNIMPLEMENTED as "old server" and falls
 * back from BatchAppend to Append.
 */
import { randomUUID } from 'node:crypto';
import { Server, ServerCredentials } from '@grpc/grpc-js';
import { StreamsService } from '@eventstore/db-client/generated/streams_grpc_pb';
import { appendHandler } from './append-handler';
import { FakeLog } from './fake-log';
import { readHandler } from './read-handler';

export interface EsdbFake {
  /** e.g. `esdb://127.0.0.1:40123?tls=false` */
  connectionString: string;
  stop(): Promise<void>;
}

export async function startEsdbFake(): Promise<EsdbFake> {
  const log = new FakeLog();
  seedSystemEvents(log);
  const server = new Server();
  server.addService(StreamsService, { read: readHandler(log), append: appendHandler(log) });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  return {
    connectionString: `esdb://127.0.0.1:${port}?tls=false`,
    // forceShutdown also ends open subscriptions, which a graceful shutdown would wait for forever.
    stop: async () => server.forceShutdown(),
  };
}

/** A fresh real server already holds system events ($-prefixed streams and types); so does the fake. */
function seedSystemEvents(log: FakeLog): void {
  for (const user of ['admin', 'ops']) {
    const data = Buffer.from(JSON.stringify({ loginName: user }), 'utf8');
    log.append(`$user-${user}`, { kind: 'no_stream' }, [
      { id: randomUUID(), type: '$UserCreated', contentType: 'application/json', data, customMetadata: new Uint8Array() },
    ]);
  }
}
