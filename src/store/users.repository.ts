import type { Collection, Db } from 'mongodb';
import { roundUsd as round6 } from '../contracts/money';
import { DocLocks } from './doc-locks';
import { newId } from './ids';

export interface UserRecord {
  _id: string;
  email: string;
  balance: number;
  status: 'active' | 'deactivated';
  sessionLimit: number;
  /** Sessions currently holding a slot; changed only under the user's lock. */
  activeSessions: number;
  /** Tasks already charged (most recent), so a retried charge is a no-op. */
  chargedTasks: string[];
  /** Most USD the user's tasks may cost in one UTC day; absent or null: no limit. */
  dailyLimit?: number | null;
  /** What the user's tasks were charged on `day` (UTC, YYYY-MM-DD). */
  spentToday?: { day: string; usd: number };
  /** Running tasks: what each was charged so far, step by step (its end charges the rest). */
  taskCharges?: Record<string, number>;
  createdAt: Date;
  updatedAt: Date;
}

const CHARGE_MEMORY = 500;

export class UsersRepository {
  private readonly users: Collection<UserRecord>;
  private readonly locks: DocLocks;
  constructor(db: Db) {
    this.users = db.collection<UserRecord>('users');
    this.locks = new DocLocks(db);
  }

  async create(email: string, balance: number, sessionLimit: number): Promise<UserRecord> {
    const now = new Date();
    const user: UserRecord = { _id: newId('usr'), email, balance, status: 'active', sessionLimit, activeSessions: 0, chargedTasks: [], createdAt: now, updatedAt: now };
    await this.users.insertOne(user);
    return user;
  }

  get(id: string): Promise<UserRecord | null> {
    return this.users.findOne({ _id: id });
  }

  list(): Promise<UserRecord[]> {
    return this.users.find({}, { projection: { chargedTasks: 0 } }).sort({ createdAt: 1 }).toArray();
  }

  topUp(id: string, amount: number): Promise<UserRecord | null> {
    return this.change(id, (u) => ({ balance: u.balance + amount }));
  }

  setStatus(id: string, status: UserRecord['status']): Promise<UserRecord | null> {
    return this.change(id, () => ({ status }));
  }

  setSessionLimit(id: string, sessionLimit: number): Promise<UserRecord | null> {
    return this.change(id, () => ({ sessionLimit }));
  }

  /** Sets (a number of USD) or lifts (null) the user's daily spending limit. */
  setDailyLimit(id: string, dailyLimit: number | null): Promise<UserRecord | null> {
    return this.change(id, () => ({ dailyLimit }));
  }

  /** What the user's daily limit leaves today (tasks charged today counted); undefined without a limit. */
  async dailyLeft(id: string, now = new Date()): Promise<{ limit: number; left: number } | undefined> {
    return (await this.spendingLeft(id, undefined, now))?.daily;
  }

  /**
   * What the user may still spend, as charged so far (every running task's steps included):
   * the balance, what the daily limit leaves today (undefined without a limit), and what
   * `taskId` was charged of it already.
   */
  async spendingLeft(id: string, taskId?: string, now = new Date()): Promise<SpendingLeft | undefined> {
    const user = await this.users.findOne({ _id: id }, { projection: { balance: 1, dailyLimit: 1, spentToday: 1, taskCharges: 1 } });
    if (!user) return undefined;
    const daily = typeof user.dailyLimit === 'number' ? { limit: user.dailyLimit, left: round6(user.dailyLimit - spentOn(user, utcDay(now))) } : undefined;
    return { balance: user.balance, daily, taskCharged: (taskId && user.taskCharges?.[taskId]) || 0 };
  }

  /**
   * Charges what a running task (or, without one, the session) spent just now: the balance
   * and today's spending at once, and the task's share so far, so its end charges only the
   * rest. What a task spends after its end was charged goes to the user alone.
   */
  async chargeSpent(id: string, usd: number, taskId?: string, now = new Date()): Promise<void> {
    if (!(usd > 0)) return;
    const day = utcDay(now);
    await this.change(id, (u) => {
      const open = taskId && !(u.chargedTasks ?? []).includes(taskId);
      const taskCharges = open ? withCharge(u.taskCharges ?? {}, taskId, usd) : u.taskCharges;
      return { balance: round9(u.balance - usd), spentToday: { day, usd: round9(spentOn(u, day) + usd) }, ...(taskCharges ? { taskCharges } : {}) };
    });
  }

  /** Takes a session slot if one is free; null when the limit is reached. */
  async acquireSessionSlot(id: string, limit: number): Promise<UserRecord | null> {
    let taken = false;
    const after = await this.change(id, (u) => {
      if (u.activeSessions >= limit) return null;
      taken = true;
      return { activeSessions: u.activeSessions + 1 };
    });
    return taken ? after : null;
  }

  async releaseSessionSlot(id: string): Promise<void> {
    await this.change(id, (u) => (u.activeSessions > 0 ? { activeSessions: u.activeSessions - 1 } : null));
  }

  /** Users whose count of held slots is above zero (the sweeper checks them against their sessions). */
  holdingSlots(limit = 1000): Promise<Pick<UserRecord, '_id' | 'activeSessions' | 'updatedAt'>[]> {
    return this.users.find({ activeSessions: { $gt: 0 } }, { projection: { activeSessions: 1, updatedAt: 1 } }).limit(limit).toArray();
  }

  /**
   * Sets the slot count to what the sessions say, if the user document has not changed
   * since `seen` (a slot taken or given back meanwhile makes the reading stale). Answers
   * whether it was corrected.
   */
  async correctSlots(id: string, holding: number, seen: { activeSessions: number; updatedAt: Date }): Promise<boolean> {
    let corrected = false;
    await this.change(id, (u) => {
      if (u.activeSessions !== seen.activeSessions || u.updatedAt.getTime() !== seen.updatedAt.getTime() || u.activeSessions === holding) return null;
      corrected = true;
      return { activeSessions: holding };
    });
    return corrected;
  }

  /**
   * Charges a task's cost once, less what its steps were charged as they happened: the
   * charge and the record of it are one write of the user document (under its lock), so a
   * retried activity finds the task already charged.
   */
  async chargeTask(id: string, taskId: string, cost: number, now = new Date()): Promise<{ charged: boolean; balance: number | null }> {
    let charged = false;
    const day = utcDay(now);
    const after = await this.change(id, (u) => {
      if ((u.chargedTasks ?? []).includes(taskId)) return null;
      charged = true;
      const { [taskId]: already = 0, ...others } = u.taskCharges ?? {};
      const rest = Math.max(0, cost - already);
      return {
        balance: round9(u.balance - rest),
        chargedTasks: [...(u.chargedTasks ?? []), taskId].slice(-CHARGE_MEMORY),
        spentToday: { day, usd: round9(spentOn(u, day) + rest) },
        taskCharges: others,
      };
    });
    return { charged, balance: after?.balance ?? null };
  }

  /**
   * Every change of a user document: read, change, write under the user's lock, so
   * concurrent changes (two tasks charged at once, a session slot taken while another is
   * released) are never lost. `fn` answers the fields to set, or null to leave it as is.
   */
  private change(id: string, fn: (u: UserRecord) => Partial<UserRecord> | null): Promise<UserRecord | null> {
    return this.locks.with(`user:${id}`, async () => {
      const user = await this.users.findOne({ _id: id });
      if (!user) return null;
      const set = fn(user);
      if (!set) return user;
      const changed = { ...set, updatedAt: new Date() };
      await this.users.updateOne({ _id: id }, { $set: changed });
      return { ...user, ...changed };
    });
  }
}

export interface SpendingLeft {
  balance: number;
  daily?: { limit: number; left: number };
  /** What the task was charged so far (its steps, its traffic). */
  taskCharged: number;
}

/** To 9 decimals: a second of proxy traffic may cost less than a millionth of a dollar. */
const round9 = (usd: number) => Math.round(usd * 1e9) / 1e9;

/** The running tasks' charges with `usd` more for `taskId`; the oldest dropped past CHARGE_MEMORY (a task that never ended). */
function withCharge(charges: Record<string, number>, taskId: string, usd: number): Record<string, number> {
  const next = { ...charges, [taskId]: round9((charges[taskId] ?? 0) + usd) };
  const ids = Object.keys(next);
  for (const old of ids.slice(0, Math.max(0, ids.length - CHARGE_MEMORY))) delete next[old];
  return next;
}

/** A date's UTC day, YYYY-MM-DD (the day a daily limit counts in). */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** What the user was charged on `day`. */
function spentOn(user: Pick<UserRecord, 'spentToday'>, day: string): number {
  return user.spentToday?.day === day ? user.spentToday.usd : 0;
}

