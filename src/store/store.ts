import type { Db } from 'mongodb';
import { ApiKeysRepository } from './api-keys.repository';
import { GridFsBlobStore } from './blobs';
import { FileBlobStore } from './file-blobs';
import type { BlobStore } from '../contracts/profiles';
import { EnvironmentsRepository } from './environments.repository';
import { EventsRepository } from './events.repository';
import { FilesRepository } from './files.repository';
import { PoliciesRepository } from './policies.repository';
import { RecordingsRepository } from './recordings.repository';
import { ProfilesRepository } from './profiles.repository';
import { SnapshotsRepository } from './snapshots.repository';
import { SessionsRepository } from './sessions.repository';
import { MongoReservationLedger, StorageQuota } from './storage-quota';
import { TasksRepository } from './tasks.repository';
import { UsersRepository } from './users.repository';

/** Every repository over one database. */
export interface Store {
  /** The database itself, for the few stores that work across collections (profile locks). */
  db: Db;
  users: UsersRepository;
  apiKeys: ApiKeysRepository;
  sessions: SessionsRepository;
  tasks: TasksRepository;
  events: EventsRepository;
  snapshots: SnapshotsRepository;
  blobs: BlobStore & { idsBefore(before: Date, limit?: number, after?: string): Promise<string[]> };
  environments: EnvironmentsRepository;
  profiles: ProfilesRepository;
  files: FilesRepository;
  /** Bytes reserved by blobs still streaming in, and the per-user cap they count against. */
  reservations: MongoReservationLedger;
  quota: StorageQuota;
  policies: PoliciesRepository;
  recordings: RecordingsRepository;
}

/** `blobDir`: blobs as files there (one machine or a shared volume); without it, GridFS in the database. */
/** `sealingKey`: the payload key, which seals what a session saves to come back elsewhere (browser snapshots). */
export function createStore(db: Db, opts: { uploadTtlMs?: number; downloadTtlMs?: number; storageMaxBytes?: number; blobDir?: string; sealingKey?: Buffer } = {}): Store {
  const blobs = opts.blobDir ? new FileBlobStore(db, opts.blobDir) : new GridFsBlobStore(db);
  const reservations = new MongoReservationLedger(db);
  return {
    blobs,
    reservations,
    quota: new StorageQuota({ usage: blobs, ledger: reservations, limitBytes: opts.storageMaxBytes ?? 5 * 1024 * 1024 * 1024 }),
    environments: new EnvironmentsRepository(db),
    profiles: new ProfilesRepository(db),
    files: new FilesRepository(db, blobs, { uploadTtlMs: opts.uploadTtlMs ?? 60 * 60 * 1000, downloadTtlMs: opts.downloadTtlMs ?? 7 * 24 * 60 * 60 * 1000 }),
    db,
    policies: new PoliciesRepository(db),
    recordings: new RecordingsRepository(db),
    users: new UsersRepository(db), apiKeys: new ApiKeysRepository(db), sessions: new SessionsRepository(db), tasks: new TasksRepository(db), events: new EventsRepository(db), snapshots: new SnapshotsRepository(db, opts.sealingKey) };
}
