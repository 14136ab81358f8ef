import { startMongoFake, type MongoFake } from '../testing/mongo-fake';
import { describeReadModelStoreContract } from '../testing/read-model-store.contract';
import { MongoReadModelStore } from './mongo-read-model-store';

/**
 * The contract against the in-process OP_MSG fake checks our use of the official driver over a
 * real socket (commands, sessions, transactions, error mapping), NOT MongoDB's semantics: the fake
 * enforces no unique index beyond _id and has no real transaction isolation. The real-server run
 * (MONGODB_URL, a replica set, e.g. from docker compose) covers those.
 */
describe('MongoReadModelStore on the in-process OP_MSG fake', () => {
  let fake: MongoFake;

  beforeAll(async () => {
    fake = await startMongoFake();
  });

  afterAll(async () => {
    await fake.stop();
  });

  describeReadModelStoreContract('mongodb (in-process OP_MSG fake)', () =>
    MongoReadModelStore.connect(fake.url, { databaseName: 'arbor_contract' }),
  );
});

const realServerUrl = process.env.MONGODB_URL;
if (realServerUrl) {
  describeReadModelStoreContract('mongodb (real server)', () => MongoReadModelStore.connect(realServerUrl));
} else {
  const reason = 'MONGODB_URL is not set (point it at a MongoDB replica set to run this suite)';
  console.warn(`Skipping ReadModelStore contract on a real MongoDB server: ${reason}`);
  describe.skip(`ReadModelStore contract: mongodb (real server) — skipped: ${reason}`, () => {
    it('runs the shared ReadModelStore contract against a real MongoDB server', () => undefined);
  });
}
