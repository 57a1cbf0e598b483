import { MongoClient, type Db } from 'mongodb';
import { ApiKeysRepository } from './api-keys.repository';

/** Connects to MongoDB (or FerretDB), makes sure the indexes exist and brings stored data up to date. */
export async function connectMongo(url: string): Promise<{ client: MongoClient; db: Db }> {
  const client = new MongoClient(url, { serverSelectionTimeoutMS: 10_000, appName: 'browser-agent' });
  await client.connect();
  const db = client.db();
  await Promise.all([
    db.collection('users').createIndex({ email: 1 }, { unique: true }),
    db.collection('apiKeys').createIndex({ hash: 1 }, { unique: true }),
    db.collection('apiKeys').createIndex({ userId: 1 }),
    db.collection('sessions').createIndex({ userId: 1, status: 1 }),
    db.collection('tasks').createIndex({ sessionId: 1 }),
    db.collection('events').createIndex({ sessionId: 1, seq: 1 }, { unique: true }),
    db.collection('events').createIndex({ expiresAt: 1 }),
    db.collection('eventExpiries').createIndex({ expiresAt: 1 }),
    db.collection('environments').createIndex({ userId: 1 }),
    db.collection('profiles').createIndex({ userId: 1 }),
    db.collection('files').createIndex({ userId: 1 }),
    db.collection('files').createIndex({ environmentId: 1 }),
    db.collection('files').createIndex({ expiresAt: 1 }),
    db.collection('cronJobs').createIndex({ userId: 1, createdAt: -1 }),
    db.collection('triggerRuns').createIndex({ cronJobId: 1, createdAt: -1, _id: -1 }),
    db.collection('recording_steps').createIndex({ taskId: 1, seq: 1 }),
  ]);
  await new ApiKeysRepository(db).backfillLookup(db.collection('migrations'));
  return { client, db };
}

/** Whether `db` is the embedded FerretDB (its buildInfo names its version beside MongoDB's). */
export async function isEmbeddedFerretDb(db: Db): Promise<boolean> {
  const info = await db.admin().command({ buildInfo: 1 });
  return info.ferretdbVersion !== undefined;
}
