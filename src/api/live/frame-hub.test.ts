import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
import pino from 'pino';
import { frameChannel, SCREENCAST_DEMAND_CHANNEL } from '../../browser/screencast';
import { FrameHub, type FrameConsumer } from './frame-hub';

/** Redis pub/sub in memory, enough for the hub: duplicate, (un)subscribe, publish, messageBuffer. */
class MemoryRedis extends EventEmitter {
  readonly channels = new Set<string>();
  constructor(readonly bus: { conns: Set<MemoryRedis>; published: { channel: string; message: Buffer }[] } = { conns: new Set(), published: [] }) {
    super();
    bus.conns.add(this);
  }
  duplicate() {
    return new MemoryRedis(this.bus);
  }
  async subscribe(...chs: string[]) {
    chs.forEach((c) => this.channels.add(c));
    return this.channels.size;
  }
  async unsubscribe(...chs: string[]) {
    chs.forEach((c) => this.channels.delete(c));
    return this.channels.size;
  }
  async publish(channel: string, message: string | Buffer) {
    const buf = Buffer.isBuffer(message) ? message : Buffer.from(message);
    this.bus.published.push({ channel, message: buf });
    const targets = [...this.bus.conns].filter((c) => c.channels.has(channel));
    for (const c of targets) {
      c.emit('message', channel, buf.toString());
      c.emit('messageBuffer', Buffer.from(channel), buf);
    }
    return targets.length;
  }
  async quit() {
    this.bus.conns.delete(this);
    return 'OK';
  }
  disconnect() {
    this.bus.conns.delete(this);
  }
}

const logger = pino({ level: 'silent' });
const tick = (ms = 0) => new Promise((r) => setTimeout(r, ms));

function consumer(): FrameConsumer & { frames: Buffer[]; ended: number } {
  const c = { frames: [] as Buffer[], ended: 0, frame: (f: Buffer) => c.frames.push(f), end: () => c.ended++ };
  return c;
}

describe('the frame hub', () => {
  let redis: MemoryRedis;
  let live: Set<string>;
  let hub: FrameHub;
  const subscribed = () => [...redis.bus.conns].flatMap((c) => [...c.channels]);
  const demandsOf = (sessionId: string) => redis.bus.published.filter((p) => p.channel === SCREENCAST_DEMAND_CHANNEL && JSON.parse(p.message.toString()).sessionId === sessionId).map((p) => JSON.parse(p.message.toString()));
  const demands = (sessionId: string) => demandsOf(sessionId).length;

  beforeEach(() => {
    redis = new MemoryRedis();
    live = new Set(['s1', 's2']);
    hub = new FrameHub({ redis: redis as unknown as Redis, logger, isLive: async (id) => live.has(id) }, { demandIntervalMs: 40, liveCheckMs: 30 });
  });
  afterEach(() => hub.close());

  it('subscribes once per session, asks for frames at once and keeps asking while anyone watches', async () => {
    const a = consumer();
    const b = consumer();
    const removeA = hub.add('s1', a);
    const removeB = hub.add('s1', b);
    await tick();
    expect(subscribed()).toEqual([frameChannel('s1')]);
    // the first demand asks for the current picture: a still page sends nothing else
    expect(demandsOf('s1')).toEqual([{ sessionId: 's1', first: true }]);
    await tick(100);
    expect(demands('s1')).toBeGreaterThanOrEqual(2);
    expect(demandsOf('s1').slice(1)).toEqual(demandsOf('s1').slice(1).map(() => ({ sessionId: 's1' })));

    await redis.publish(frameChannel('s1'), Buffer.from('jpeg-1'));
    await redis.publish(frameChannel('s2'), Buffer.from('not watched'));
    expect(a.frames.map(String)).toEqual(['jpeg-1']);
    expect(b.frames.map(String)).toEqual(['jpeg-1']);
    expect(String(hub.latest('s1'))).toBe('jpeg-1');

    removeA();
    removeA();
    expect(hub.consumers('s1')).toBe(1);
    expect(subscribed()).toEqual([frameChannel('s1')]);
    removeB();
    await tick();
    expect(subscribed()).toEqual([]);
    expect(hub.latest('s1')).toBeUndefined();
    expect(hub.sessions()).toEqual([]);
    const asked = demands('s1');
    await tick(100);
    expect(demands('s1')).toBe(asked);
  });

  it('keeps sessions apart', async () => {
    const a = consumer();
    const b = consumer();
    hub.add('s1', a);
    hub.add('s2', b);
    await tick();
    await redis.publish(frameChannel('s2'), Buffer.from('two'));
    expect(a.frames).toEqual([]);
    expect(b.frames.map(String)).toEqual(['two']);
    expect(subscribed().sort()).toEqual([frameChannel('s1'), frameChannel('s2')]);
  });

  it('ends the consumers of a session that has ended and lets go of it', async () => {
    const a = consumer();
    const b = consumer();
    hub.add('s1', a);
    hub.add('s2', b);
    live.delete('s1');
    await tick(100);
    expect(a.ended).toBe(1);
    expect(b.ended).toBe(0);
    expect(hub.sessions()).toEqual(['s2']);
    expect(subscribed()).toEqual([frameChannel('s2')]);
  });

  it('ends every consumer on close', async () => {
    const a = consumer();
    hub.add('s1', a);
    await hub.close();
    expect(a.ended).toBe(1);
    expect(() => hub.add('s1', consumer())).toThrow(/closed/);
  });
});
