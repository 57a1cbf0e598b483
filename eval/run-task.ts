import { registerScript, type Step } from '../test/support/scripted-model';
import type { SiteServer } from './site-server';
import type { EvalTask } from './tasks';
import type { Outcome, Verdict } from './verdicts';

/** How a task run reaches the service. */
export interface RunContext {
  /** The service's base URL. */
  baseUrl: string;
  /** An API key for a run that makes `calls` rate-limited calls (a pool of users keeps under the per-user limit). */
  apiKey(calls: number): Promise<string> | string;
  sites: SiteServer;
  /** Wall-clock cap of one task: the session is ended past it (status "timeout"). */
  timeoutMs: number;
  /** With a scripted model: where its scripts are registered. */
  scriptedModelUrl?: string;
  log?: (line: string) => void;
}

export interface TaskRun {
  runId: string;
  sessionId?: string;
  taskId?: string;
  outcome: Outcome;
  verdict: Verdict;
  /** The failure of the run itself (an HTTP error from the service), not of the agent. */
  error?: string;
  /** From submitting the task to seeing it end. */
  wallMs: number;
  startedAt: number;
  endedAt: number;
  /** The agent's steps as the task's recording lists them; null when it could not be read. */
  recordedSteps: number | null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const TERMINAL = new Set(['task_completed', 'failed', 'stopped', 'cancelled', 'terminated']);
const MAX_GUARDRAIL_ANSWERS = 3;

async function call(ctx: RunContext, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${ctx.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: any = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* left as text */
  }
  return { status: res.status, body: parsed };
}

async function uploadFiles(ctx: RunContext, key: string, files: { name: string; content: string }[]): Promise<string[]> {
  const form = new FormData();
  for (const f of files) form.append('files', new Blob([f.content], { type: 'text/plain' }), f.name);
  const res = await fetch(`${ctx.baseUrl}/files/upload`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
  const body = (await res.json()) as any;
  if (res.status !== 200) throw new Error(`POST /files/upload: ${res.status} ${JSON.stringify(body)}`);
  return body.files.map((f: { fileId: string }) => f.fileId);
}

let counter = 0;
/** A fresh id for one run of a task (its site address space and, scripted, its script's token). */
export function newRunId(task: EvalTask): string {
  return `${task.id}-${Date.now().toString(36)}-${(++counter).toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;
}

/**
 * Runs one task through the API as a client would: upload its files, POST /start/run-task,
 * poll until it ends, answer a guardrail with the task's answer (send-message), then judge
 * it by what the site received and the final answer. `steps` registers a script first
 * (scripted model only).
 */
export async function runEvalTask(ctx: RunContext, task: EvalTask, opts: { steps?: Step[]; runId?: string } = {}): Promise<TaskRun> {
  const runId = opts.runId ?? newRunId(task);
  const log = ctx.log ?? (() => undefined);
  const key = await ctx.apiKey(1 + (task.files?.length ? 1 : 0) + (task.guardrailAnswer ? 1 : 0));
  let prompt = task.prompt;
  if (opts.steps) {
    if (!ctx.scriptedModelUrl) throw new Error('scripted steps need the scripted model');
    const token = `[eval ${runId}]`;
    await registerScript(ctx.scriptedModelUrl, { match: token, steps: opts.steps });
    prompt = `${prompt} ${token}`;
  }
  const fileIds = task.files?.length ? await uploadFiles(ctx, key, task.files) : [];
  const startingUrl = ctx.sites.pageUrl(runId, task.site, task.start);
  const body = {
    task: {
      prompt,
      startingUrl,
      maxDuration: Math.min(300_000, ctx.timeoutMs),
      ...(task.outputType ? { outputType: task.outputType, outputSchema: task.outputSchema } : {}),
      ...(task.secrets ? { secrets: [{ match: new URL(startingUrl).host, fields: task.secrets }] } : {}),
      ...(fileIds.length ? { files: fileIds } : {}),
    },
  };

  const startedAt = Date.now();
  const deadline = startedAt + ctx.timeoutMs;
  let sessionId: string | undefined;
  let taskId: string | undefined;
  let state: any;
  let error: string | undefined;
  let guardrails = 0;
  let answered = 0;
  let lastGuardrail = '';
  let answeredAt = 0;
  try {
    const started = await call(ctx, key, 'POST', '/start/run-task', body);
    if (started.status !== 200 || !started.body?.taskId) throw new Error(`POST /start/run-task: ${started.status} ${JSON.stringify(started.body)}`);
    ({ sessionId, taskId } = started.body);
    state = started.body;
    for (;;) {
      const status = String(state?.status ?? state?.type ?? '');
      if (TERMINAL.has(status)) break;
      if (status === 'guardrail_trigger') {
        const asked = `${state.data?.type}: ${state.data?.value}`;
        // the question just answered reads as asked until the workflow takes the answer
        const stale = asked === lastGuardrail && Date.now() - answeredAt < 5000;
        if (!stale) {
          guardrails += 1;
          lastGuardrail = asked;
          log(`${task.id}: the agent asks (${asked})`);
          if (!task.guardrailAnswer || answered >= MAX_GUARDRAIL_ANSWERS) break;
          answered += 1;
          answeredAt = Date.now();
          const r = await call(ctx, key, 'POST', '/start/send-message', { sessionId, message: { actionType: 'guardrail', newState: 'resume', prompt: task.guardrailAnswer } });
          if (r.status !== 200) throw new Error(`guardrail answer: ${r.status} ${JSON.stringify(r.body)}`);
        }
      }
      if (Date.now() > deadline) {
        state = { status: 'timeout' };
        break;
      }
      await sleep(250);
      const polled = await call(ctx, key, 'GET', `/task/${sessionId}/${taskId}`);
      if (polled.status !== 200) throw new Error(`GET /task: ${polled.status} ${JSON.stringify(polled.body)}`);
      state = polled.body;
    }
  } catch (err) {
    error = String((err as Error).message ?? err);
  }
  const endedAt = Date.now();
  const status = error ? 'error' : String(state?.status ?? state?.type ?? 'unknown');
  if (sessionId && status !== 'task_completed' && status !== 'failed') {
    // a task still running (timeout, an unanswered question) is ended with its session
    await call(ctx, key, 'POST', '/start/send-message', { sessionId, message: { actionType: 'state', newState: 'terminate' } }).catch(() => undefined);
  }

  let recordedSteps: number | null = null;
  if (sessionId && taskId) {
    // the recording is written as the steps happen; a moment lets the last one land
    await sleep(300);
    const rec = await call(ctx, key, 'GET', `/task/${sessionId}/${taskId}/recording`).catch(() => null);
    if (rec?.status === 200 && Array.isArray(rec.body?.steps)) recordedSteps = rec.body.steps.filter((s: { by?: string }) => (s.by ?? 'agent') === 'agent').length;
  }

  const outcome: Outcome = {
    status,
    code: state?.code,
    answer: status === 'task_completed' && typeof state?.data?.message === 'string' ? state.data.message : null,
    records: ctx.sites.records(runId),
    guardrails,
  };
  const verdict = task.verdict(outcome);
  log(`${task.id}: ${status}${outcome.code ? ` ${outcome.code}` : ''} → ${verdict.pass ? 'pass' : 'fail'} (${verdict.reason})${error ? ` [${error}]` : ''}`);
  return { runId, sessionId, taskId, outcome, verdict, error, wallMs: endedAt - startedAt, startedAt, endedAt, recordedSteps };
}
