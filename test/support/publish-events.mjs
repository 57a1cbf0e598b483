// A separate process that publishes events for one session through the service's own
// publisher (dist/), as an API instance and a worker do. Used by test/e2e/event-seq.test.ts.
//   node publish-events.mjs <sessionId> <label> <count>
// Prints "ready" once connected, starts when it reads a line on stdin, prints "done <n>".
import { MongoClient } from 'mongodb';
import { Redis } from 'ioredis';
import repository from '../../dist/store/events.repository.js';
import publisherModule from '../../dist/events/publisher.js';
import loggerModule from '../../dist/logger.js';

const [sessionId, label, count] = process.argv.slice(2);
const mongo = await MongoClient.connect(process.env.TEST_MONGODB_URL);
const redis = new Redis(process.env.TEST_REDIS_URL);
await redis.ping();
const publisher = new publisherModule.EventPublisher(redis, new repository.EventsRepository(mongo.db()), loggerModule.createLogger('warn'));
process.stdout.write('ready\n');
await new Promise((resolve) => process.stdin.once('data', resolve));
try {
  // Not awaited one by one: the process's own chain orders them, as in the service.
  const published = await Promise.all(
    Array.from({ length: Number(count) }, (_, i) => publisher.message(sessionId, { type: 'agent', content: `${label}-${i}` })),
  );
  process.stdout.write(`done ${published.length}\n`);
} catch (err) {
  process.stdout.write(`failed: ${err?.message ?? err}\n`);
  process.exitCode = 1;
} finally {
  await redis.quit();
  await mongo.close();
}
