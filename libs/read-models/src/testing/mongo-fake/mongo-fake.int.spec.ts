import { randomUUID } from 'node:crypto';
import { MongoBulkWriteError, MongoClient, MongoServerError, type Db } from 'mongodb';
import { startMongoFake, type MongoFake } from '.';

/**
 * The fake, driven by the official driver over its real socket. These tests pin what our adapter
 * relies on the fake for (handshake as a replica-set primary, cursors, transactions, write errors);
 * they say nothing about MongoDB's own semantics, which only a real server can check.
 */
describe('in-process MongoDB OP_MSG fake', () => {
  let fake: MongoFake;
  let client: MongoClient;
  let db: Db;
  const collectionName = () => `c_${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    fake = await startMongoFake();
    client = await MongoClient.connect(fake.url);
    db = client.db('fake_spec');
  });

  afterAll(async () => {
    await client.close();
    await fake.stop();
  });

  it('answers the handshake as the primary of a replica set with sessions', async () => {
    const hello = await db.admin().command({ hello: 1 });

    expect(hello).toMatchObject({ isWritablePrimary: true, setName: 'rs0', logicalSessionTimeoutMinutes: 30, ok: 1 });
    await expect(db.command({ ping: 1 })).resolves.toMatchObject({ ok: 1 });
  });

  it('hands a large result out in batches through getMore, in sort order', async () => {
    const collection = db.collection<{ _id: string; n: number }>(collectionName());
    await collection.insertMany(Array.from({ length: 250 }, (_, n) => ({ _id: `d${n}`, n })));

    const all = await collection.find({ n: { $gte: 10 } }, { sort: { n: -1 }, batchSize: 30 }).toArray();

    expect(all).toHaveLength(240);
    expect(all[0]).toEqual({ _id: 'd249', n: 249 });
    expect(all.at(-1)).toEqual({ _id: 'd10', n: 10 });
    expect(await collection.countDocuments({ n: { $lt: 100 } }, { skip: 5, limit: 50 })).toBe(50);
  });

  it('reports a duplicate _id as write error 11000 and, unordered, still inserts the rest', async () => {
    const collection = db.collection<{ _id: string }>(collectionName());
    await collection.insertOne({ _id: 'a' });

    const failure = await collection.insertOne({ _id: 'a' }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(MongoServerError);
    expect(failure).toMatchObject({ code: 11000 });

    const bulk = await collection.insertMany([{ _id: 'a' }, { _id: 'b' }], { ordered: false }).catch((error: unknown) => error);
    expect(bulk).toBeInstanceOf(MongoBulkWriteError);
    expect((await collection.find().toArray()).map((doc) => doc._id)).toEqual(['a', 'b']);
  });

  it('shows transaction writes to nobody else before commit, and drops them on abort', async () => {
    const collection = db.collection<{ _id: string; n?: number }>(collectionName());
    const session = client.startSession();
    try {
      session.startTransaction();
      await collection.insertOne({ _id: 'inside' }, { session });
      expect(await collection.findOne({ _id: 'inside' }, { session })).toEqual({ _id: 'inside' });
      expect(await collection.findOne({ _id: 'inside' })).toBeNull();
      await session.commitTransaction();
      expect(await collection.findOne({ _id: 'inside' })).toEqual({ _id: 'inside' });

      session.startTransaction();
      await collection.updateOne({ _id: 'inside' }, { $set: { n: 1 } }, { session });
      await collection.insertOne({ _id: 'discarded' }, { session });
      await session.abortTransaction();
    } finally {
      await session.endSession();
    }

    expect(await collection.find().toArray()).toEqual([{ _id: 'inside' }]);
  });

  it('fails the later of two overlapping transactions with a transient write conflict, which withTransaction retries', async () => {
    const collection = db.collection<{ _id: string; n: number }>(collectionName());
    await collection.insertOne({ _id: 'counter', n: 0 });
    const [first, second] = [client.startSession(), client.startSession()];
    try {
      first.startTransaction();
      await collection.updateOne({ _id: 'counter' }, { $inc: { n: 1 } }, { session: first });
      second.startTransaction();
      await collection.updateOne({ _id: 'counter' }, { $inc: { n: 1 } }, { session: second });
      await first.commitTransaction();
      const conflict = await second.commitTransaction().catch((error: unknown) => error);
      expect(conflict).toBeInstanceOf(MongoServerError);
      expect((conflict as MongoServerError).hasErrorLabel('TransientTransactionError')).toBe(true);

      await second.withTransaction(() => collection.updateOne({ _id: 'counter' }, { $inc: { n: 1 } }, { session: second }));
    } finally {
      await Promise.all([first.endSession(), second.endSession()]);
    }

    expect(await collection.findOne({ _id: 'counter' })).toEqual({ _id: 'counter', n: 2 });
  });

  it('refuses a command it does not know', async () => {
    await expect(db.command({ fsync: 1 })).rejects.toMatchObject({ codeName: 'CommandNotFound' });
  });
});
