/**
 * Managed-proxy traffic, charged as it flows. A metered session's relay is read every
 * `everyMs`, whether a step runs or not (the page's own requests while the agent waits, a
 * person's takeover, what loads after the last step), and once more before the relay
 * closes (the session's end, a hibernation): each reading is charged to the session's owner
 * and, while a task works on the session, to that task's share. The traffic read since the
 * previous step is reported with the next step (the task's `proxy_bytes` and `proxy_cost`),
 * already charged.
 */
import type { Logger } from '../logger';
import type { BrowserSession } from './pool';

/** Smallest charge made between steps (USD): about 2.5 KB at 4 USD/GB; the rest waits for the next reading. */
const MIN_CHARGE_USD = 0.00001;

const round9 = (usd: number) => Math.round(usd * 1e9) / 1e9;

/** A session's traffic since the previous step's report, and what of it is not yet charged. */
interface Meter {
  bytes: number;
  cost: number;
  uncharged: number;
  timer: NodeJS.Timeout;
  /** Readings one after another: a step's last reading waits for a timer's. */
  chain: Promise<void>;
  /** What the running step's traffic may cost (USD) before the relay is suspended, if anything bounds it. */
  cap?: number;
}

/** What the page reads for a request refused once the task's budget is spent. */
export const SPENDING_LIMIT_REACHED = "the task's spending limit is reached: the proxy carries nothing more in this step";

export type ChargeTraffic = (userId: string, usd: number, taskId?: string) => Promise<void>;

export class TrafficMeter {
  private readonly meters = new Map<string, Meter>();
  constructor(
    private readonly charge: ChargeTraffic,
    private readonly logger: Logger,
    private readonly everyMs = 1000,
  ) {}

  /** Starts reading a metered session's relay (a session without a price is not metered). */
  watch(session: BrowserSession): void {
    if (session.proxyPricePerByte === undefined) return;
    this.forget(session.sessionId);
    const timer = setInterval(() => void this.read(session, false), this.everyMs);
    timer.unref();
    this.meters.set(session.sessionId, { bytes: 0, cost: 0, uncharged: 0, timer, chain: Promise.resolve() });
  }

  /**
   * Bounds the step that starts: once the traffic counted since the previous step's report
   * costs more than `usd` (what the task's budget leaves), the relay is suspended until the
   * step's report. No `usd`: not bounded (a step that stopped or failed lifts its bound so).
   */
  capStep(session: BrowserSession, usd: number | undefined): void {
    const meter = this.meters.get(session.sessionId);
    if (!meter) return;
    meter.cap = usd;
    if (usd === undefined || meter.cost <= usd) session.egress.resume();
    this.enforce(session, meter);
  }

  /** Reads and charges the relay now, and answers the traffic not yet reported with a step (then counted from zero). */
  async takeForStep(session: BrowserSession): Promise<{ bytes: number; cost: number } | undefined> {
    const meter = this.meters.get(session.sessionId);
    if (!meter) return undefined;
    await this.read(session, true);
    const taken = { bytes: meter.bytes, cost: round9(meter.cost) };
    meter.bytes = 0;
    meter.cost = 0;
    // Between steps the traffic is the session owner's, not a task's: the relay carries it again.
    meter.cap = undefined;
    session.egress.resume();
    return taken;
  }

  /** The last reading, before the relay closes; the session is not read again. */
  async stop(session: BrowserSession): Promise<void> {
    const meter = this.meters.get(session.sessionId);
    if (!meter) return;
    clearInterval(meter.timer);
    await this.read(session, true);
    this.forget(session.sessionId);
  }

  private enforce(session: BrowserSession, meter: Meter): void {
    if (meter.cap === undefined || meter.cost <= meter.cap || session.egress.isSuspended) return;
    session.egress.suspend(SPENDING_LIMIT_REACHED);
    this.logger.info({ sessionId: session.sessionId, taskId: session.billedTaskId, cost: round9(meter.cost), cap: meter.cap }, 'proxy traffic suspended: the step reached what the task may spend');
  }

  private forget(sessionId: string): void {
    const meter = this.meters.get(sessionId);
    if (meter) clearInterval(meter.timer);
    this.meters.delete(sessionId);
  }

  private read(session: BrowserSession, settle: boolean): Promise<void> {
    const meter = this.meters.get(session.sessionId);
    if (!meter) return Promise.resolve();
    meter.chain = meter.chain.then(() => this.readNow(session, meter, settle));
    return meter.chain;
  }

  private async readNow(session: BrowserSession, meter: Meter, settle: boolean): Promise<void> {
    const bytes = session.egress.takeBytes();
    const cost = bytes * (session.proxyPricePerByte ?? 0);
    meter.bytes += bytes;
    meter.cost += cost;
    meter.uncharged += cost;
    this.enforce(session, meter);
    if (!session.userId || meter.uncharged <= 0 || (!settle && meter.uncharged < MIN_CHARGE_USD)) return;
    const usd = round9(meter.uncharged);
    try {
      await this.charge(session.userId, usd, session.billedTaskId);
      meter.uncharged -= usd;
    } catch (err) {
      // Kept for the next reading; a task's end charges what its steps reported in any case.
      this.logger.warn({ err, sessionId: session.sessionId }, 'proxy traffic not charged yet');
    }
  }
}
