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
 * Of those, the ones another process placed: the worker's own live load does not know of them
 * until their browsers are opened, so they are added to it when it places sessions itself.
 */
const PLACED_BY_OTHERS = 'bas:workers:placed-by-others';

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
    await this.redis.multi().hset(KEY, entry.workerId, JSON.stringify({ ...entry, heartbeatAt: Date.now() })).hdel(PLACED, entry.workerId).hdel(PLACED_BY_OTHERS, entry.workerId).exec();
  }

  async remove(workerId: string): Promise<void> {
    await this.redis.multi().hdel(KEY, workerId).hdel(PLACED, workerId).hdel(PLACED_BY_OTHERS, workerId).exec();
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
   * Places a session: picks the alive worker with the most free room, counting the sessions
   * placed on each since its last heartbeat, and notes the placement, in one step on the Redis
   * server, so placements made at the same moment by other processes each see the ones before
   * them. `self` is the calling process's own worker, compared by the live load it passes
   * (its registry entry may be a heartbeat old) plus the sessions other processes placed on
   * it since its heartbeat, and chosen on a tie. Null when none has room.
   */
  async place(exclude: string[] = [], self?: Omit<WorkerEntry, 'heartbeatAt'>): Promise<{ workerId: string; taskQueue: string } | null> {
    const args = [String(Date.now()), String(this.ttlMs), JSON.stringify(exclude), self?.workerId ?? '', String(self?.sessions ?? 0), String(self?.capacity ?? 0), self?.taskQueue ?? ''];
    const chosen = (await this.redis.eval(PLACE_SCRIPT, 3, KEY, PLACED, PLACED_BY_OTHERS, ...args)) as [string, string] | null;
    return chosen ? { workerId: chosen[0], taskQueue: chosen[1] } : null;
  }
}

/**
 * KEYS: the workers, the placements since each one's heartbeat, those of them made by
 * another process than the worker's own. ARGV: now, the TTL, the
 * excluded worker ids (JSON), then the caller's own worker (id, live sessions, capacity, task
 * queue; an empty id when it has none). Returns {workerId, taskQueue} or nil.
 */
const PLACE_SCRIPT = `
local now, ttl = tonumber(ARGV[1]), tonumber(ARGV[2])
local excluded = {}
for _, id in ipairs(cjson.decode(ARGV[3])) do excluded[id] = true end
local selfId, selfSessions, selfCapacity, selfQueue = ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7]
local workers = redis.call('HGETALL', KEYS[1])
local bestId, bestQueue, bestRatio
for i = 1, #workers, 2 do
  local id = workers[i]
  if id ~= selfId and not excluded[id] then
    -- An entry that is not what a heartbeat writes is passed over, never a failed placement.
    local ok, w = pcall(cjson.decode, workers[i + 1])
    if not ok or type(w) ~= 'table' then w = {} end
    local beat, held, capacity = tonumber(w.heartbeatAt), tonumber(w.sessions), tonumber(w.capacity)
    if beat and held and capacity and capacity > 0 and type(w.taskQueue) == 'string' and now - beat <= ttl then
      local sessions = held + (tonumber(redis.call('HGET', KEYS[2], id)) or 0)
      if sessions < capacity and (bestRatio == nil or sessions / capacity < bestRatio) then
        bestId, bestQueue, bestRatio = id, w.taskQueue, sessions / capacity
      end
    end
  end
end
if selfId ~= '' then selfSessions = selfSessions + (tonumber(redis.call('HGET', KEYS[3], selfId)) or 0) end
if selfId ~= '' and not excluded[selfId] and selfSessions < selfCapacity and (bestRatio == nil or selfSessions / selfCapacity <= bestRatio) then
  bestId, bestQueue = selfId, selfQueue
end
if bestId == nil then return nil end
redis.call('HINCRBY', KEYS[2], bestId, 1)
if bestId ~= selfId then redis.call('HINCRBY', KEYS[3], bestId, 1) end
return {bestId, bestQueue}
`;
