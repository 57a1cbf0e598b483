import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { StepResult, TaskView } from '../contracts/session-types';
import { childProcessesMemory } from './process-memory';

/**
 * What a worker process (browser worker, workflow worker) counts, served on its own
 * METRICS_PORT. Aggregate figures only: no user, session, task or URL in any label.
 */
export class WorkerMetrics {
  readonly registry = new Registry();
  private model = 'unknown';
  private watched = false;

  readonly tasks = new Counter({ name: 'browser_agent_tasks_total', help: 'Tasks that ended, by outcome (task status)', labelNames: ['outcome'], registers: [this.registry] });
  readonly taskErrors = new Counter({ name: 'browser_agent_task_errors_total', help: 'Tasks that failed, by error code', labelNames: ['code'], registers: [this.registry] });
  readonly steps = new Histogram({
    name: 'browser_agent_step_duration_seconds',
    help: 'Agent steps (observe, model, act), by outcome: continue, done, human_input, failed, cancelled',
    labelNames: ['outcome'],
    buckets: [0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120],
    registers: [this.registry],
  });
  readonly stepPhases = new Histogram({
    name: 'browser_agent_step_phase_seconds',
    help: "Where a step's time went: observe (reading the page), model (waiting for the model), act (the action and its pictures), rest (the rest of the step: charging, recording, collecting a finished task's files)",
    labelNames: ['phase'],
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30],
    registers: [this.registry],
  });
  readonly tokens = new Counter({ name: 'browser_agent_model_tokens_total', help: 'Model tokens used by agent steps, by model and kind (input, output)', labelNames: ['model', 'kind'], registers: [this.registry] });
  readonly cost = new Counter({ name: 'browser_agent_model_cost_usd_total', help: 'Model cost of agent steps in USD, by model', labelNames: ['model'], registers: [this.registry] });
  readonly proxyCost = new Counter({ name: 'browser_agent_proxy_cost_usd_total', help: 'Managed proxy traffic charged with agent steps, in USD', registers: [this.registry] });
  readonly deliveries = new Counter({
    name: 'browser_agent_deliveries_total',
    help: 'Webhook and chat delivery attempts, by channel and outcome (delivered; refused: final; retry: will be tried again)',
    labelNames: ['channel', 'outcome'],
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'browser_agent_' });
  }

  /** The pool whose sessions and browser memory are read at each scrape; the model steps are counted under. */
  watch(pool: { size: number; capacity: number }, model: string): void {
    this.model = model;
    if (this.watched) return;
    this.watched = true;
    new Gauge({ name: 'browser_agent_browser_sessions', help: 'Sessions whose browser this worker holds', registers: [this.registry], collect: function () { this.set(pool.size); } });
    new Gauge({ name: 'browser_agent_browser_capacity', help: 'Sessions this worker may hold at once (BROWSER_MAX_SESSIONS)', registers: [this.registry], collect: function () { this.set(pool.capacity); } });
    new Gauge({
      name: 'browser_agent_browser_memory_bytes',
      help: 'Resident memory of the browser processes this worker started (Chromium and its renderers)',
      registers: [this.registry],
      async collect() {
        const bytes = await childProcessesMemory();
        if (bytes !== null) this.set(bytes);
      },
    });
  }

  /** Call when a step starts; the answer records it when it ends. */
  stepStarted(): { ended(result: StepResult & { cost: number }): void; failed(cancelled: boolean): void } {
    const end = this.steps.startTimer();
    return {
      ended: (result) => {
        const seconds = end({ outcome: result.kind });
        if (result.timings) this.phases(seconds, result.timings);
        this.tokens.inc({ model: this.model, kind: 'input' }, result.usage.inputTokens);
        this.tokens.inc({ model: this.model, kind: 'output' }, result.usage.outputTokens);
        const proxy = result.proxy?.cost ?? 0;
        this.cost.inc({ model: this.model }, Math.max(0, result.cost - proxy));
        if (proxy) this.proxyCost.inc(proxy);
      },
      failed: (cancelled) => end({ outcome: cancelled ? 'cancelled' : 'failed' }),
    };
  }

  /** A step's time by phase; what its own timings do not name is the rest. */
  private phases(seconds: number, timings: NonNullable<StepResult['timings']>): void {
    const [observe, model, act] = [timings.observeMs / 1000, timings.modelMs / 1000, timings.actMs / 1000];
    this.stepPhases.observe({ phase: 'observe' }, observe);
    this.stepPhases.observe({ phase: 'model' }, model);
    this.stepPhases.observe({ phase: 'act' }, act);
    this.stepPhases.observe({ phase: 'rest' }, Math.max(0, seconds - observe - model - act));
  }

  /** A task's end, recorded once (`first`: the first time it was charged). */
  taskEnded(task: Pick<TaskView, 'status' | 'code'>, first: boolean): void {
    if (!first) return;
    this.tasks.inc({ outcome: task.status });
    if (task.status === 'failed') this.taskErrors.inc({ code: task.code ?? 'TASK_FAILED' });
  }

  delivery(channel: 'webhook' | 'chat', outcome: 'delivered' | 'final' | 'retry'): void {
    this.deliveries.inc({ channel, outcome: outcome === 'final' ? 'refused' : outcome });
  }
}

/** The process's worker metrics (one per process, whatever number of Temporal workers it runs). */
export const workerMetrics = new WorkerMetrics();
