import type { Redis } from 'ioredis';

export interface WorkerEntry {
  workerId: string;
  taskQueue: string;
  sessions: number;
  capacity: number;
  heartbeatAt: number;
}

/** What a heartbeat sends: the entry, and the sessions whose placements its `sessions` now answers for. */
export interface WorkerBeat extends Omit<WorkerEntry, 'heartbeatAt'> {
  /**
   * The sessions it holds, is opening or was placed with, and those it had since its last
   * heartbeat: placements of these are no longer counted apart (held, they are in `sessions`;
   * ended, they hold nothing).
   */
  known?: string[];
}

/** The calling process's own worker, by its live load, in a placement. */
export type SelfWorker = WorkerBeat;

const KEY = 'bas:workers';
/**
 * Placements no heartbeat of their worker has reported yet: session id → "workerId|placedAtMs".
 * They count in their worker's load on top of its last heartbeat, until a heartbeat names the
 * session (it is in `sessions` then, or ended), the session is placed again, or PENDING_MS pass
 * (its browser was never opened there).
 */
const PENDING = 'bas:workers:pending';
/** How long a placement no heartbeat has reported counts (its activity's way to the worker, at worst). */
const PENDING_MS = 30_000;

/**
 * Browser workers announce themselves in Redis and heartbeat; a worker whose last
 * heartbeat is older than the TTL counts as gone (health, placement).
 */
export class WorkerRegistry {
  constructor(
    private readonly redis: Redis,
    private readonly ttlMs: number,
  ) {}

  /** Writes the worker's entry and, in the same step, stops counting the placements its `sessions` now answers for. */
  async heartbeat(beat: WorkerBeat): Promise<void> {
    const { known = [], ...entry } = beat;
    await this.redis.eval(BEAT_SCRIPT, 2, KEY, PENDING, entry.workerId, JSON.stringify({ ...entry, heartbeatAt: Date.now() }), JSON.stringify(known));
  }

  async remove(workerId: string): Promise<void> {
    await this.redis.eval(REMOVE_SCRIPT, 2, KEY, PENDING, workerId);
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
   * Places a session: picks the alive worker with the most free room, counting the placements
   * no heartbeat of it has reported yet, and notes the placement, in one step on the Redis
   * server, so placements made at the same moment by other processes each see the ones before
   * them. `self` is the calling process's own worker, compared by the live load it passes (its
   * registry entry may be a heartbeat old) plus the placements on it it does not know of yet,
   * and chosen on a tie. Null when none has room.
   */
  async place(sessionId: string, exclude: string[] = [], self?: SelfWorker): Promise<{ workerId: string; taskQueue: string } | null> {
    const args = [String(Date.now()), String(this.ttlMs), String(PENDING_MS), JSON.stringify(exclude), sessionId, self?.workerId ?? '', String(self?.sessions ?? 0), String(self?.capacity ?? 0), self?.taskQueue ?? '', JSON.stringify(self?.known ?? [])];
    const chosen = (await this.redis.eval(PLACE_SCRIPT, 2, KEY, PENDING, ...args)) as [string, string] | null;
    return chosen ? { workerId: chosen[0], taskQueue: chosen[1] } : null;
  }
}

/** KEYS: the workers, the pending placements. ARGV: the worker's id, its entry (JSON), the sessions it knows of (JSON). */
const BEAT_SCRIPT = `
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
local prefix = ARGV[1] .. '|'
for _, id in ipairs(cjson.decode(ARGV[3])) do
  local placed = redis.call('HGET', KEYS[2], id)
  if placed and string.sub(placed, 1, #prefix) == prefix then redis.call('HDEL', KEYS[2], id) end
end
`;

/** KEYS: the workers, the pending placements. ARGV: the worker's id. */
const REMOVE_SCRIPT = `
redis.call('HDEL', KEYS[1], ARGV[1])
local prefix = ARGV[1] .. '|'
local pending = redis.call('HGETALL', KEYS[2])
for i = 1, #pending, 2 do
  if string.sub(pending[i + 1], 1, #prefix) == prefix then redis.call('HDEL', KEYS[2], pending[i]) end
end
`;

/**
 * KEYS: the workers, the pending placements. ARGV: now, the TTL, how long a pending placement
 * counts, the excluded worker ids (JSON), the session, then the caller's own worker (id, live
 * sessions, capacity, task queue, the sessions it knows of (JSON); an empty id when it has
 * none). Returns {workerId, taskQueue} or nil.
 */
const PLACE_SCRIPT = `
local now, ttl, pendingMs = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local excluded = {}
for _, id in ipairs(cjson.decode(ARGV[4])) do excluded[id] = true end
local sessionId = ARGV[5]
local selfId, selfSessions, selfCapacity, selfQueue = ARGV[6], tonumber(ARGV[7]), tonumber(ARGV[8]), ARGV[9]
local selfKnows = {}
for _, id in ipairs(cjson.decode(ARGV[10])) do selfKnows[id] = true end
-- Placements no heartbeat has reported, per worker (this session's own, placed again, not counted).
local pending = {}
local placed = redis.call('HGETALL', KEYS[2])
for i = 1, #placed, 2 do
  local id = placed[i]
  local worker, at = string.match(placed[i + 1], '^(.*)|(%d+)$')
  at = tonumber(at)
  if worker == nil or at == nil or now - at > pendingMs then redis.call('HDEL', KEYS[2], id)
  elseif id ~= sessionId and not (worker == selfId and selfKnows[id]) then pending[worker] = (pending[worker] or 0) + 1 end
end
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
      local sessions = held + (pending[id] or 0)
      if sessions < capacity and (bestRatio == nil or sessions / capacity < bestRatio) then
        bestId, bestQueue, bestRatio = id, w.taskQueue, sessions / capacity
      end
    end
  end
end
if selfId ~= '' then selfSessions = selfSessions + (pending[selfId] or 0) end
if selfId ~= '' and not excluded[selfId] and selfSessions < selfCapacity and (bestRatio == nil or selfSessions / selfCapacity <= bestRatio) then
  bestId, bestQueue = selfId, selfQueue
end
if bestId == nil then return nil end
redis.call('HSET', KEYS[2], sessionId, bestId .. '|' .. now)
return {bestId, bestQueue}
`;
