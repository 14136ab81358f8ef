import type { Binary, Document } from 'bson';
import { aggregate, find } from 'mingo';
import { cloneDocument } from './bson-values';
import { CommandError } from './command-error';
import { CursorRegistry } from './cursor-registry';
import { FakeStorage } from './fake-storage';
import { deleteDocuments, insertDocuments, updateDocuments } from './write-commands';

/** What a command runs against: its database's collections, seen through its transaction if any. */
interface CommandContext {
  namespace(collection: string): string;
  read(collection: string): Document[];
  write(collection: string): Document[];
}

type Handler = (command: Document, context: CommandContext) => Document;

/**
 * Runs the commands the official driver sends for our ReadModelStore adapter (and its handshake,
 * monitoring and sessions), answering like a replica-set primary. Filters, update operators,
 * sorts and pipelines are evaluated by mingo.
 */
export class CommandDispatcher {
  private readonly storage = new FakeStorage();
  private readonly cursors = new CursorRegistry();
  private readonly indexNames = new Map<string, Set<string>>();
  private readonly handlers: Record<string, Handler>;

  /** `hello` builds the handshake/monitoring reply (the server's identity as a replica-set primary). */
  constructor(hello: () => Document) {
    this.handlers = {
      hello,
      isMaster: hello,
      ismaster: hello,
      ping: () => ({}),
      buildInfo: () => ({ version: '7.0.0', versionArray: [7, 0, 0, 0], maxBsonObjectSize: 16 * 1024 * 1024 }),
      endSessions: () => ({}),
      insert: (command, context) =>
        insertDocuments(context.namespace(command.insert), context.write(command.insert), command.documents, command.ordered),
      update: (command, context) =>
        updateDocuments(context.namespace(command.update), context.write(command.update), command.updates, command.ordered),
      delete: (command, context) => deleteDocuments(context.write(command.delete), command.deletes),
      find: (command, context) => this.find(command, context),
      aggregate: (command, context) =>
        this.cursors.first(
          context.namespace(command.aggregate),
          aggregate(context.read(command.aggregate), command.pipeline).map(cloneDocument),
          command.cursor?.batchSize,
        ),
      getMore: (command) => this.cursors.more(Number(command.getMore), command.batchSize),
      killCursors: (command) => this.cursors.kill(command.cursors.map(Number)),
      count: (command, context) => ({ n: matching(context.read(command.count), command.query, command).length }),
      createIndexes: (command, context) => this.createIndexes(context.namespace(command.createIndexes), command.indexes),
      commitTransaction: (command) => {
        this.storage.commitTransaction(transactionKeyOf(command)!);
        return {};
      },
      abortTransaction: (command) => {
        this.storage.abortTransaction(transactionKeyOf(command)!);
        return {};
      },
    };
  }

  /** Runs one command document; failures become `{ ok: 0 }` replies as the server sends them. */
  run(command: Document): Document {
    const name = Object.keys(command)[0];
    try {
      const handler = Object.hasOwn(this.handlers, name) ? this.handlers[name] : undefined;
      if (!handler) throw new CommandError(59, 'CommandNotFound', `no such command: '${name}'`);
      return { ...handler(command, this.contextOf(command, name)), ok: 1 };
    } catch (error) {
      if (!(error instanceof CommandError)) return { ok: 0, code: 1, codeName: 'InternalError', errmsg: String(error) };
      const { code, codeName, message: errmsg, errorLabels } = error;
      return { ok: 0, code, codeName, errmsg, ...(errorLabels.length ? { errorLabels } : {}) };
    }
  }

  private contextOf(command: Document, name: string): CommandContext {
    const database: string = command.$db;
    const ownsTransaction = name === 'commitTransaction' || name === 'abortTransaction';
    const transactionKey = ownsTransaction ? undefined : transactionKeyOf(command);
    if (transactionKey) this.storage.joinTransaction(transactionKey, command.startTransaction === true);
    const namespace = (collection: string) => `${database}.${collection}`;
    return {
      namespace,
      read: (collection) => this.storage.read(namespace(collection), transactionKey),
      write: (collection) => this.storage.write(namespace(collection), transactionKey),
    };
  }

  private find(command: Document, context: CommandContext): Document {
    const singleBatch = command.singleBatch || command.limit < 0;
    return this.cursors.first(
      context.namespace(command.find),
      matching(context.read(command.find), command.filter, command).map(cloneDocument),
      singleBatch ? Number.MAX_SAFE_INTEGER : command.batchSize,
      singleBatch,
    );
  }

  /** Indexes are only remembered by name (so the reply counts are right), never enforced. */
  private createIndexes(namespace: string, indexes: { name: string }[]): Document {
    const names = this.indexNames.get(namespace) ?? new Set(['_id_']);
    this.indexNames.set(namespace, names);
    const numIndexesBefore = names.size;
    for (const { name } of indexes) names.add(name);
    return { numIndexesBefore, numIndexesAfter: names.size, createdCollectionAutomatically: false };
  }
}

/** The documents a find or count selects, in the order it asks for. */
function matching(documents: Document[], filter: Document | undefined, options: Document): Document[] {
  const cursor = find(documents, filter ?? {}, options.projection);
  if (options.sort) cursor.sort(options.sort);
  if (options.skip) cursor.skip(options.skip);
  if (options.limit) cursor.limit(Math.abs(options.limit));
  return cursor.all();
}

/** Commands of a multi-document transaction carry `autocommit: false` (retryable writes carry only txnNumber). */
function transactionKeyOf(command: Document): string | undefined {
  if (command.autocommit !== false) return undefined;
  return `${(command.lsid.id as Binary).toString('hex')}:${command.txnNumber}`;
}
