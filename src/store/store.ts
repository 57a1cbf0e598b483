import type { Db } from 'mongodb';
import { ApiKeysRepository } from './api-keys.repository';
import { EventsRepository } from './events.repository';
import { SnapshotsRepository } from './snapshots.repository';
import { SessionsRepository } from './sessions.repository';
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
}

export function createStore(db: Db): Store {
  return { db, users: new UsersRepository(db), apiKeys: new ApiKeysRepository(db), sessions: new SessionsRepository(db), tasks: new TasksRepository(db), events: new EventsRepository(db), snapshots: new SnapshotsRepository(db) };
}
