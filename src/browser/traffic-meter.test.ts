import pino from 'pino';
import type { BrowserSession } from './pool';
import { SPENDING_LIMIT_REACHED, TrafficMeter } from './traffic-meter';

/** A metered session whose relay relays `bytes.next` bytes by each reading. */
function session(pricePerByte: number) {
  const relay = { next: 0, suspendedFor: undefined as string | undefined };
  const egress = {
    takeBytes: () => relay.next,
    suspend: (reason: string) => (relay.suspendedFor = reason),
    resume: () => (relay.suspendedFor = undefined),
    get isSuspended() {
      return relay.suspendedFor !== undefined;
    },
  };
  const s = { sessionId: 's1', userId: 'u1', billedTaskId: 't1', proxyPricePerByte: pricePerByte, egress } as unknown as BrowserSession;
  return { s, relay };
}

describe('the traffic meter', () => {
  const charged: number[] = [];
  const meter = () => new TrafficMeter(async (_u, usd) => void charged.push(usd), pino({ level: 'silent' }), 60_000);

  it("suspends the relay within a step once the step's traffic costs more than the task may still spend, and lets it carry again after the step's report", async () => {
    const m = meter();
    const { s, relay } = session(0.001);
    m.watch(s);
    m.capStep(s, 0.25);
    relay.next = 100; // 0.1 USD
    await (m as unknown as { read(s: BrowserSession, settle: boolean): Promise<void> }).read(s, false);
    expect(relay.suspendedFor).toBeUndefined();
    relay.next = 200; // 0.2 more: 0.3 > 0.25
    await (m as unknown as { read(s: BrowserSession, settle: boolean): Promise<void> }).read(s, false);
    expect(relay.suspendedFor).toBe(SPENDING_LIMIT_REACHED);
    relay.next = 0;
    expect(await m.takeForStep(s)).toEqual({ bytes: 300, cost: 0.3 });
    expect(relay.suspendedFor).toBeUndefined();
    await m.stop(s);
  });

  it('leaves a step of a task without maxCost unbounded, and a cap already passed suspends at once', async () => {
    const m = meter();
    const { s, relay } = session(0.001);
    m.watch(s);
    m.capStep(s, undefined);
    relay.next = 10_000;
    await m.takeForStep(s);
    expect(relay.suspendedFor).toBeUndefined();
    relay.next = 50;
    await (m as unknown as { read(s: BrowserSession, settle: boolean): Promise<void> }).read(s, false);
    m.capStep(s, 0.01);
    expect(relay.suspendedFor).toBe(SPENDING_LIMIT_REACHED);
    // a step that stopped lifts its bound: the relay carries again
    m.capStep(s, undefined);
    expect(relay.suspendedFor).toBeUndefined();
    await m.stop(s);
  });
});
