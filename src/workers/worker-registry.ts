import type { Redis } from 'ioredis';

export interface WorkerEntry {
  workerId: string;
  taskQueue: string;
  sessions: number;
  capacity: number;
  heartbeatAt: number;
}

const KEY = 'bas:workers';
/** Sessions placed on each worker since its last heartbeat (counted there from the next one on). */
const PLACED = 'bas:workers:placed';

/**
 * Browser workers announce themselves in Redis and heartbeat; a worker whose last
 * heartbeat is older than the TTL counts as gone (health, placement).
 */
export class WorkerRegistry {
  constructor(
    private readonly redis: Redis,
    private readonly ttlMs: number,
  ) {}

  async heartbeat(entry: Omit<WorkerEntry, 'heartbeatAt'>): Promise<void> {
    await this.redis.multi().hset(KEY, entry.workerId, JSON.stringify({ ...entry, heartbeatAt: Date.now() })).hdel(PLACED, entry.workerId).exec();
  }

  /** A session was just placed on the worker: picks count it until the worker's next heartbeat does. */
  async notePlaced(workerId: string): Promise<void> {
    await this.redis.hincrby(PLACED, workerId, 1);
  }

  async remove(workerId: string): Promise<void> {
    await this.redis.multi().hdel(KEY, workerId).hdel(PLACED, workerId).exec();
  }

  async alive(): Promise<WorkerEntry[]> {
    const all = await this.redis.hgetall(KEY);
    const now = Date.now();
    const alive: WorkerEntry[] = [];
    const stale: string[] = [];
    for (const [id, raw] of Object.entries(all)) {
      const entry = JSON.parse(raw) as WorkerEntry;
      if (now - entry.heartbeatAt <= this.ttlMs) alive.push(entry);
      else if (now - entry.heartbeatAt > 10 * this.ttlMs) stale.push(id);
    }
    if (stale.length) await this.redis.hdel(KEY, ...stale);
    return alive;
  }

  /**
   * The alive worker with the most free room, or null when none has any. Sessions placed
   * since a worker's last heartbeat count too, so a burst of starts spreads at once.
   */
  async pick(exclude: string[] = []): Promise<WorkerEntry | null> {
    const [workers, placed] = await Promise.all([this.alive(), this.redis.hgetall(PLACED)]);
    const candidates = workers.map((w) => ({ ...w, sessions: w.sessions + (Number(placed[w.workerId]) || 0) })).filter((w) => !exclude.includes(w.workerId) && w.sessions < w.capacity);
    candidates.sort((a, b) => a.sessions / a.capacity - b.sessions / b.capacity);
    return candidates[0] ?? null;
  }
}
