import { ObjectId } from 'bson';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { CommandDispatcher } from './command-dispatcher';
import { OP_QUERY, encodeOpMsg, encodeOpReply, parseMessage, takeMessages } from './wire-protocol';

/**
 * An in-process stand-in for a MongoDB replica-set primary, spoken to by the official driver over
 * a real localhost TCP socket (wire protocol OP_MSG, plus the legacy OP_QUERY handshake).
 *
 * It checks OUR USE OF THE DRIVER (commands, options, sessions, transactions, error mapping), not
 * MongoDB's semantics: only `_id` is unique (other unique indexes are not enforced), transactions
 * are all-or-nothing but without real snapshot isolation, and filters/updates are mingo's reading
 * of the query language. Run the same tests against a real server (MONGODB_URL) for those.
 */
export interface MongoFake {
  /** A connection string for MongoClient (replica set, no database name). */
  url: string;
  stop(): Promise<void>;
}

const REPLICA_SET = 'rs0';

export async function startMongoFake(): Promise<MongoFake> {
  const sockets = new Set<Socket>();
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  // The replies name the server by its address, known only once it listens.
  const address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  const dispatcher = new CommandDispatcher(replicaSetPrimary(address));
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    serve(socket, dispatcher);
  });
  return {
    url: `mongodb://${address}/?replicaSet=${REPLICA_SET}`,
    stop: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

/** The hello/isMaster reply: a writable primary of a one-member replica set, so transactions are allowed. */
function replicaSetPrimary(address: string) {
  const electionId = new ObjectId('7fffffff0000000000000001');
  return () => ({
    helloOk: true,
    isWritablePrimary: true,
    ismaster: true,
    secondary: false,
    setName: REPLICA_SET,
    setVersion: 1,
    electionId,
    hosts: [address],
    primary: address,
    me: address,
    maxBsonObjectSize: 16 * 1024 * 1024,
    maxMessageSizeBytes: 48_000_000,
    maxWriteBatchSize: 100_000,
    localTime: new Date(),
    logicalSessionTimeoutMinutes: 30,
    minWireVersion: 0,
    maxWireVersion: 21, // MongoDB 7.0
    readOnly: false,
  });
}

function serve(socket: Socket, dispatcher: CommandDispatcher): void {
  let pending: Buffer = Buffer.alloc(0);
  socket.setNoDelay(true);
  socket.on('error', () => socket.destroy());
  socket.on('data', (chunk) => {
    const { messages, rest } = takeMessages(Buffer.concat([pending, chunk]));
    pending = rest;
    try {
      for (const message of messages) {
        const request = parseMessage(message);
        const reply = dispatcher.run(request.command);
        if (request.moreToCome) continue;
        const encode = request.opCode === OP_QUERY ? encodeOpReply : encodeOpMsg;
        socket.write(encode(request.requestId, reply));
      }
    } catch {
      socket.destroy(); // a message we cannot parse: drop the connection as the server would
    }
  });
}
