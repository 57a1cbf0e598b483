import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { createLogger } from '../../logger';
import { McpConnections } from './mcp.connections';

/** A transport and server as the registry sees them: the client's messages come in through onmessage, answers go out through send. */
function fakeConnection(userId: string) {
  const delivered: JSONRPCMessage[] = [];
  const transport: Transport = {
    start: async () => undefined,
    close: async () => undefined,
    send: async () => undefined,
    onmessage: (m) => delivered.push(m),
  };
  const server = { close: jest.fn(async () => undefined) };
  return {
    conn: { userId, server, transport },
    server,
    delivered,
    fromClient: (m: JSONRPCMessage) => transport.onmessage!(m),
    toClient: (m: JSONRPCMessage) => transport.send(m),
  };
}

const IDLE = 60_000;
const registry = (maxPerUser = 2) => new McpConnections({ maxPerUser, idleMs: IDLE, logger: createLogger('silent') });

describe('McpConnections', () => {
  afterEach(() => jest.useRealTimers());

  it('gives a user at most maxPerUser slots; a released slot (once, however often released) can be taken again; users do not share', () => {
    const r = registry(2);
    const a1 = r.reserve('usr_a')!;
    const a2 = r.reserve('usr_a')!;
    expect(a1 && a2).toBeTruthy();
    expect(r.reserve('usr_a')).toBeNull();
    expect(r.reserve('usr_b')).not.toBeNull();
    a1.release();
    a1.release();
    expect(r.used('usr_a')).toBe(1);
    expect(r.reserve('usr_a')).not.toBeNull();
    expect(r.reserve('usr_a')).toBeNull();
  });

  it('an added session holds its slot until removed or closed', async () => {
    const r = registry(1);
    const c = fakeConnection('usr_a');
    r.add('s1', r.reserve('usr_a')!, c.conn);
    expect(r.get('s1')).toBe(c.conn);
    expect(r.reserve('usr_a')).toBeNull();
    await r.close('s1', 'test');
    expect(c.server.close).toHaveBeenCalledTimes(1);
    expect(r.get('s1')).toBeUndefined();
    expect(r.used('usr_a')).toBe(0);
    // Closing again (the transport's onclose after the server closed it) changes nothing.
    await r.close('s1', 'test');
    expect(r.remove('s1')).toBeUndefined();
    expect(c.server.close).toHaveBeenCalledTimes(1);
  });

  it('closes a session idle for idleMs (server and transport) and frees its slot; a request starts the idle time again', async () => {
    jest.useFakeTimers();
    const r = registry(1);
    const c = fakeConnection('usr_a');
    r.add('s1', r.reserve('usr_a')!, c.conn);
    jest.advanceTimersByTime(IDLE - 1000);
    r.touch('s1');
    jest.advanceTimersByTime(IDLE - 1000);
    c.fromClient({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(c.delivered).toHaveLength(1); // the protocol still gets every message
    jest.advanceTimersByTime(IDLE - 1000);
    expect(c.server.close).not.toHaveBeenCalled();
    expect(r.get('s1')).toBe(c.conn);

    jest.advanceTimersByTime(1000);
    await Promise.resolve();
    expect(c.server.close).toHaveBeenCalledTimes(1);
    expect(r.get('s1')).toBeUndefined();
    expect(r.used('usr_a')).toBe(0);
    expect(r.reserve('usr_a')).not.toBeNull();
  });

  it('does not expire a session while a request of its client runs; the answer (or a cancellation) starts the idle time', () => {
    jest.useFakeTimers();
    const r = registry(2);
    const c = fakeConnection('usr_a');
    r.add('s1', r.reserve('usr_a')!, c.conn);
    c.fromClient({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'browser_task', arguments: {} } });
    // Progress notifications are not answers.
    void c.toClient({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } });
    jest.advanceTimersByTime(IDLE * 3);
    expect(c.server.close).not.toHaveBeenCalled();
    void c.toClient({ jsonrpc: '2.0', id: 7, result: { content: [] } });
    jest.advanceTimersByTime(IDLE - 1);
    expect(c.server.close).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(c.server.close).toHaveBeenCalledTimes(1);

    const d = fakeConnection('usr_a');
    r.add('s2', r.reserve('usr_a')!, d.conn);
    d.fromClient({ jsonrpc: '2.0', id: 'x', method: 'tools/call', params: { name: 'browser_task', arguments: {} } });
    jest.advanceTimersByTime(IDLE * 2);
    expect(d.server.close).not.toHaveBeenCalled();
    d.fromClient({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'x' } });
    jest.advanceTimersByTime(IDLE);
    expect(d.server.close).toHaveBeenCalledTimes(1);
  });

  it('idle timers do not keep the process alive', async () => {
    const spy = jest.spyOn(global, 'setTimeout');
    try {
      const r = registry(1);
      r.add('s1', r.reserve('usr_a')!, fakeConnection('usr_a').conn);
      const timer = spy.mock.results.at(-1)!.value as NodeJS.Timeout;
      expect(timer.hasRef()).toBe(false);
      await r.closeAll();
    } finally {
      spy.mockRestore();
    }
  });

  it('closeAll closes every session and frees every slot (API shutdown)', async () => {
    const r = registry(3);
    const conns = ['usr_a', 'usr_a', 'usr_b'].map((u, i) => {
      const c = fakeConnection(u);
      r.add(`s${i}`, r.reserve(u)!, c.conn);
      return c;
    });
    await r.closeAll();
    expect(conns.map((c) => c.server.close.mock.calls.length)).toEqual([1, 1, 1]);
    expect(r.size).toBe(0);
    expect([r.used('usr_a'), r.used('usr_b')]).toEqual([0, 0]);
  });
});
