import { io, type Socket } from 'socket.io-client';

export interface Received {
  event: string;
  payload: any;
}

/** A socket to the live channel that records everything it receives. */
export async function connectSession(baseUrl: string, auth: Record<string, unknown>): Promise<{ socket: Socket; received: Received[]; waitFor(pred: (r: Received) => boolean, timeoutMs?: number): Promise<Received> }> {
  const socket = io(baseUrl, { auth, transports: ['websocket'], reconnection: false, forceNew: true });
  const received: Received[] = [];
  socket.onAny((event, payload) => received.push({ event, payload }));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('connect_error', (err) => reject(err));
  });
  const waitFor = (pred: (r: Received) => boolean, timeoutMs = 20_000) =>
    new Promise<Received>((resolve, reject) => {
      const deadline = Date.now() + timeoutMs;
      const tick = () => {
        const hit = received.find(pred);
        if (hit) return resolve(hit);
        if (Date.now() > deadline) return reject(new Error(`event not received; got: ${JSON.stringify(received.map((r) => [r.event, r.payload?.type]))}`));
        setTimeout(tick, 50);
      };
      tick();
    });
  return { socket, received, waitFor };
}

export async function connectError(baseUrl: string, auth: Record<string, unknown>): Promise<string> {
  const socket = io(baseUrl, { auth, transports: ['websocket'], reconnection: false, forceNew: true });
  try {
    return await new Promise<string>((resolve, reject) => {
      socket.once('connect', () => reject(new Error('connected')));
      socket.once('connect_error', (err) => resolve(err.message));
    });
  } finally {
    socket.close();
  }
}

export function emitWithAck(socket: Socket, body: unknown, timeoutMs = 60_000): Promise<any> {
  return socket.timeout(timeoutMs).emitWithAck('message', body);
}
