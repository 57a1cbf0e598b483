/**
 * A small pool of worker threads running the schema engine (schema-engine.ts), so that
 * compiling and applying a user's `outputSchema` never blocks the event loop of the API
 * (other users' requests, `GET /start/health`) or of a browser worker (heartbeats, CDP).
 *
 * Every job has a time limit: a thread still busy after it is terminated and replaced,
 * and the job fails with a `SchemaTimeoutError`. Jobs wait in a bounded queue; beyond it
 * they are refused at once with a `SchemaBusyError`.
 */
import { Worker } from 'node:worker_threads';
import { engineSource, type SchemaEngine, type StructuredCheck } from './schema-engine';

type Op = keyof SchemaEngine;

export interface SchemaWorkersOptions {
  /** Threads of the pool. */
  threads: number;
  /** Longest time one job may run on its thread. */
  timeoutMs: number;
  /** Jobs that may wait for a thread. */
  maxQueue: number;
  /** Heap of one thread, MB. */
  maxHeapMb: number;
}

/** A job went past a limit of its thread (time, memory); the message says which. */
export class SchemaLimitError extends Error {}
export class SchemaTimeoutError extends SchemaLimitError {}
export class SchemaBusyError extends Error {}

interface Job {
  id: number;
  op: Op;
  args: unknown[];
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
}

interface Slot {
  worker: Worker;
  job?: Job;
  timer?: NodeJS.Timeout;
}

const DEFAULTS: SchemaWorkersOptions = { threads: 1, timeoutMs: 10_000, maxQueue: 200, maxHeapMb: 256 };

function threadSource(): string {
  return `
    const { parentPort } = require('node:worker_threads');
    ${engineSource()}
    const engine = createSchemaEngine({
      Ajv: require(${JSON.stringify(require.resolve('ajv'))}).default,
      addFormats: require(${JSON.stringify(require.resolve('ajv-formats'))}).default,
      RE2JS: require(${JSON.stringify(require.resolve('re2js'))}).RE2JS,
    });
    parentPort.on('message', ({ id, op, args }) => {
      let answer;
      try {
        answer = { id, ok: true, value: engine[op](...args) };
      } catch (err) {
        answer = { id, ok: false, error: String((err && err.message) || err) };
      }
      parentPort.postMessage(answer);
    });`;
}

export class SchemaWorkers {
  private readonly opts: SchemaWorkersOptions;
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;

  constructor(options: Partial<SchemaWorkersOptions> = {}) {
    this.opts = { ...DEFAULTS, ...options };
  }

  problem(schema: Record<string, unknown>): Promise<string | null> {
    return this.run('problem', [schema]) as Promise<string | null>;
  }

  errors(schema: Record<string, unknown>, value: unknown): Promise<string[]> {
    return this.run('errors', [schema, value]) as Promise<string[]>;
  }

  checkJson(schema: Record<string, unknown>, message: string): Promise<StructuredCheck> {
    return this.run('checkJson', [schema, message]) as Promise<StructuredCheck>;
  }

  /** Jobs running or waiting. */
  get pending(): number {
    return this.queue.length + this.slots.filter((slot) => slot.job).length;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new Error('schema workers closed'));
    await Promise.all(this.slots.splice(0).map((slot) => this.stop(slot, new Error('schema workers closed'))));
  }

  private run(op: Op, args: unknown[]): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error('schema workers closed'));
    if (this.queue.length >= this.opts.maxQueue) return Promise.reject(new SchemaBusyError('Too many output schemas are being checked at once'));
    return new Promise((resolve, reject) => {
      this.queue.push({ id: this.nextId++, op, args, resolve, reject });
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.queue.length) {
      let slot = this.slots.find((candidate) => !candidate.job);
      if (!slot) {
        if (this.slots.length >= this.opts.threads) return;
        slot = this.spawn();
      }
      const job = this.queue.shift()!;
      slot.job = job;
      slot.timer = setTimeout(() => {
        void this.stop(slot!, new SchemaTimeoutError(`took longer than ${this.opts.timeoutMs / 1000} s`));
        this.dispatch();
      }, this.opts.timeoutMs);
      slot.worker.ref();
      slot.worker.postMessage({ id: job.id, op: job.op, args: job.args });
    }
  }

  private spawn(): Slot {
    const worker = new Worker(threadSource(), { eval: true, resourceLimits: { maxOldGenerationSizeMb: this.opts.maxHeapMb } });
    worker.unref();
    const slot: Slot = { worker };
    worker.on('message', (answer: { id: number; ok: boolean; value?: unknown; error?: string }) => {
      const job = slot.job;
      if (!job || job.id !== answer.id) return;
      this.finish(slot);
      if (answer.ok) job.resolve(answer.value);
      else job.reject(new Error(answer.error));
      this.dispatch();
    });
    const lost = (err: Error) => {
      void this.stop(slot, err);
      this.dispatch();
    };
    worker.on('error', (err: Error & { code?: string }) =>
      lost(err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? new SchemaLimitError(`used more than ${this.opts.maxHeapMb} MB`) : err),
    );
    worker.on('exit', () => lost(new Error('schema worker thread exited')));
    this.slots.push(slot);
    return slot;
  }

  private finish(slot: Slot): void {
    clearTimeout(slot.timer);
    slot.job = undefined;
    slot.worker.unref();
  }

  /** Ends the slot's thread; its job (if any) fails with `err`. */
  private async stop(slot: Slot, err: Error): Promise<void> {
    const index = this.slots.indexOf(slot);
    if (index >= 0) this.slots.splice(index, 1);
    const job = slot.job;
    this.finish(slot);
    job?.reject(err);
    slot.worker.removeAllListeners('exit');
    await slot.worker.terminate().catch(() => undefined);
  }
}
