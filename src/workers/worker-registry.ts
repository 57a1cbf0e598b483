import type { Redis } from 'ioredis';

export interface WorkerEntry {
  workerId: string;
  taskQueue: string;
  sessions: number;
  capacity: number;
  heartbeatAt: number;
}

const KEY = 'bas:workers';

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
    await this.redis.hset(KEY, entry.workerId, JSON.stringify({ ...entry, heartbeatAt: Date.now() }));
  }

  async remove(workerId: string): Promise<void> {
    await this.redis.hdel(KEY, workerId);
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

  /** The alive worker with the most free room, or null when none has any. */
  async pick(exclude: string[] = []): Promise<WorkerEntry | null> {
    const candidates = (await this.alive()).filter((w) => !exclude.includes(w.workerId) && w.sessions < w.capacity);
    candidates.sort((a, b) => a.sessions / a.capacity - b.sessions / b.capacity);
    return candidates[0] ?? null;
  }
}
