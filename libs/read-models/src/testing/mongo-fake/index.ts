export { startMongoFake, type MongoFake } from './mongo-fake-server';
