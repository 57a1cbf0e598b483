import type { Config } from '../config';
import { NotFoundError, ServiceError, SessionLimitError } from '../contracts/errors';
import type { ProfileSource } from '../contracts/profiles';
import { newSessionId, newTaskId } from './ids';
import { ProfileLocks } from './profile-locks';
import type { Store } from './store';
import type { UserRecord } from './users.repository';

export interface AdmittedSession {
  sessionId: string;
  /** The owner's balance when the slot was taken. */
  balance: number;
}

/** A fresh session id (128 random bits) and task id, for callers that must know them before admission (trigger runs). */
export const newSessionIds = (): { sessionId: string; taskId: string } => ({ sessionId: newSessionId(), taskId: newTaskId() });

/**
 * The one way a session is let in, for the API and for trigger runs alike: a session slot
 * of the owner, the lock of the profile or environment it runs on, and its record; then
 * the caller starts the session workflow (a client start for the API, a child workflow for
 * a trigger run, with the input src/sessions/ builds) and calls `abandon` if that start
 * fails. Nothing is kept by a refused admission. Refusals are ServiceErrors of the catalogue: SESSION_LIMIT_REACHED (with the
 * user's current count and limit), PROFILE_IN_USE, ENVIRONMENT_NOT_FOUND, PROFILE_NOT_FOUND,
 * USER_NOT_FOUND.
 */
export class SessionAdmission {
  private readonly locks: ProfileLocks;
  constructor(private readonly deps: { store: Pick<Store, 'db' | 'users' | 'sessions'>; config: Pick<Config, 'DEFAULT_SESSION_LIMIT'> }) {
    this.locks = new ProfileLocks(deps.store.db);
  }

  /** Takes the slot, the profile lock and writes the record; `sessionId` is new unless given (a retried trigger activity). */
  async admit(req: { userId: string; profile?: ProfileSource; sessionId?: string; user?: Pick<UserRecord, '_id' | 'sessionLimit'> }): Promise<AdmittedSession> {
    const { store, config } = this.deps;
    // The API read the user for this request already (its key's owner): no second read.
    const user = req.user?._id === req.userId ? req.user : await store.users.get(req.userId);
    if (!user) throw new NotFoundError('USER_NOT_FOUND', 'The user no longer exists');
    const limit = user.sessionLimit ?? config.DEFAULT_SESSION_LIMIT;
    const slot = await store.users.acquireSessionSlot(user._id, limit);
    if (!slot) {
      const current = (await store.users.get(user._id))?.activeSessions ?? limit;
      throw new SessionLimitError(current, limit);
    }
    const sessionId = req.sessionId ?? newSessionId();
    const profile = req.profile;
    let locked = false;
    try {
      if (profile) {
        const lock = await this.locks.acquire(profile, sessionId);
        const idField = { [`${profile.kind}Id`]: profile.id };
        if (lock === 'busy') throw new ServiceError('PROFILE_IN_USE', `The ${profile.kind} is in use by another live session`, idField);
        if (lock === 'uploading') throw new ServiceError('PROFILE_IN_USE', `An archive is being uploaded to the ${profile.kind}; start the session when the upload has finished`, idField);
        if (lock === 'missing') {
          throw profile.kind === 'environment' ? new NotFoundError('ENVIRONMENT_NOT_FOUND', 'Environment not found') : new NotFoundError('PROFILE_NOT_FOUND', 'Profile not found');
        }
        locked = true;
      }
      await store.sessions.create(sessionId, user._id);
    } catch (err) {
      if (locked && profile) await this.locks.release(profile, sessionId);
      await store.users.releaseSessionSlot(user._id);
      throw err;
    }
    return { sessionId, balance: slot.balance };
  }

  /** The session workflow could not be started: the record ends as failed, the slot and the lock are given back. */
  async abandon(req: { sessionId: string; userId: string; profile?: Pick<ProfileSource, 'kind' | 'id' | 'userId'> }): Promise<void> {
    if (await this.deps.store.sessions.end(req.sessionId, 'failed', 'instance_lost')) await this.deps.store.users.releaseSessionSlot(req.userId);
    if (req.profile) await this.locks.release(req.profile, req.sessionId);
  }
}
