import os from 'node:os';

/** Busy and total CPU time of the machine's cores so far (ms), as the kernel counts them. */
export interface CpuTimes {
  busy: number;
  total: number;
}

export function machineCpuTimes(): CpuTimes {
  let busy = 0;
  let total = 0;
  for (const { times } of os.cpus()) {
    const all = times.user + times.nice + times.sys + times.irq + times.idle;
    total += all;
    busy += all - times.idle;
  }
  return { busy, total };
}

/**
 * Whether the machine's CPU is short now: its cores were busier than `busyLimit` (a fraction)
 * over the last few seconds, or its load of the last minute is above `loadPerCore` times its
 * cores. The first reacts within seconds of a burst and lets go as soon as it ends; the second
 * catches a machine whose cores are shared with more than they can run. Sampled once a second
 * while asked, and not at all otherwise.
 */
export class CpuGauge {
  private readonly samples: CpuTimes[] = [];
  private timer?: NodeJS.Timeout;
  private lastAsked = 0;

  constructor(
    private readonly opts: { busyLimit: number; loadPerCore: number; windowSamples?: number; everyMs?: number; now?: () => number; times?: () => CpuTimes; loadavg?: () => number; cores?: number },
  ) {}

  short(): boolean {
    this.lastAsked = this.now();
    this.start();
    const load = (this.opts.loadavg ?? (() => os.loadavg()[0]))();
    if (load > (this.opts.cores ?? os.availableParallelism()) * this.opts.loadPerCore) return true;
    const busy = this.busyFraction();
    return busy !== undefined && busy > this.opts.busyLimit;
  }

  /** The cores' busy share over the samples held (undefined until there are two). */
  busyFraction(): number | undefined {
    if (this.samples.length < 2) return undefined;
    const first = this.samples[0];
    const last = this.samples[this.samples.length - 1];
    const total = last.total - first.total;
    return total > 0 ? (last.busy - first.busy) / total : undefined;
  }

  /** Takes a sample now (the timer calls it; tests call it directly). */
  sample(): void {
    this.samples.push((this.opts.times ?? machineCpuTimes)());
    const keep = (this.opts.windowSamples ?? 3) + 1;
    if (this.samples.length > keep) this.samples.splice(0, this.samples.length - keep);
    // Nobody asked for a while: stop sampling until the next question.
    if (this.now() - this.lastAsked > 60_000) this.stop();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.samples.length = 0;
  }

  private start(): void {
    if (this.timer) return;
    this.sample();
    this.timer = setInterval(() => this.sample(), this.opts.everyMs ?? 1_000);
    this.timer.unref();
  }

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }
}
