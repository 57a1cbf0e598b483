import type { ManualAction } from '../contracts/actions';
import { CancelledFailure, Context } from '@temporalio/activity';
import type { BrowserContext, Page } from 'playwright-core';
import { describeAtPoint } from '../recording/describe';
import { maskedStep } from '../agent/record-step';
import { STATE_KEY } from '../browser/page-elements';
import type { Recorder } from '../recording/recorder';
import type { ElementDescription } from '../contracts/recording';
import type { AgentRunner } from '../agent/agent';
import type { SecretVault } from '../agent/secrets/vault';
import type { BrowserPool, RestoreState } from '../browser/pool';
import type { TrafficMeter } from '../browser/traffic-meter';
import type { Spending } from '../agent/step-context';
import type { SavedMemory } from '../agent/task-memory';
import type { HibernationsRepository } from '../store/hibernations.repository';
import type { ProfileMaterializer, ProfileSource } from '../contracts/profiles';
import { failureOf, isServiceError, toTemporalFailure } from '../contracts/errors';
import type { Logger } from '../logger';
import type { Store } from '../store/store';
import type { EventPublisher } from '../events/publisher';
import type { CancelledStep, InteractionAction, PreviousTask, SessionProxy, StepInput, StepRequest, StepResult, TaskParams } from '../contracts/session-types';
import { HUMAN_TYPE_MAX_MS, humanTypingDelays } from '../contracts/schemas/message.schema';
import { workerMetrics } from '../metrics/worker-metrics';

/** Heartbeats often enough that a stop reaches the step within a second (a step shorter than this sends none). */
const HEARTBEAT_EVERY_MS = 500;

/** Activities on one browser worker's own task queue: they touch the browsers it holds. */
/**
 * The lease heartbeat: the workflow notices a dead worker after its heartbeat timeout (12 s),
 * so a beat every 3 s leaves room for three late ones; each beat is a write on the server,
 * for every open session.
 */
const LEASE_BEAT_MS = 3000;
/** How often a held session is looked at: its page and storage are saved when they changed since, for a restore elsewhere. */
const SNAPSHOT_CHECK_MS = 2000;
/** A session whose pages sent nothing and did not navigate is saved this often all the same (a page script may change its storage). */
const SNAPSHOT_QUIET_MS = 30_000;

export function createBrowserActivities(deps: {
  pool: BrowserPool;
  agent: AgentRunner;
  events: EventPublisher;
  store: Store;
  profiles?: ProfileMaterializer;
  /** Cleans up what the session left on this worker's disk (fetched task files). */
  onClosed?: (sessionId: string) => Promise<void>;
  /** The sessions' secret values: what leaves the worker is masked with them. */
  vault?: SecretVault;
  /** Writes a person's actions during a task into its recording. */
  recorder?: Recorder;
  /** Sealed states of hibernated sessions. */
  hibernations?: HibernationsRepository;
  /** Charges what each step spent as it ends (the task's end charges only the rest). */
  spending?: Pick<Spending, 'charge'>;
  /** Metered proxy traffic: charged as it flows, reported with the step. */
  meter?: Pick<TrafficMeter, 'takeForStep'>;
  logger: Logger;
}) {
  const { pool, agent, events, store, profiles, onClosed, vault } = deps;
  const mask = (sessionId: string, text: string) => (vault ? vault.mask(sessionId, text) : text);
  const logger = deps.logger.child({ component: 'browser-activities' });

  /** Charges the user what a step's model calls cost, as the step ends; not charged now (a busy database), the task's end charges it. */
  async function chargeStep(input: StepInput, usd: number): Promise<void> {
    if (!deps.spending || !(usd > 0)) return;
    try {
      await deps.spending.charge(input.userId, usd, input.taskId);
    } catch (err) {
      logger.warn({ err, sessionId: input.sessionId, taskId: input.taskId }, 'step not charged yet; its task charges it when it ends');
    }
  }

  /** Stores the task's downloads and captured requests on its record. */
  async function collect(sessionId: string, taskId: string): Promise<{ files: number; requests: number }> {
    // The task's recording (and its pictures) is complete before the task is.
    await deps.recorder?.settle(taskId);
    deps.recorder?.forget(taskId);
    const session = pool.get(sessionId);
    if (!session) return { files: 0, requests: 0 };
    if (session.artifacts.taskId === taskId) session.artifacts.taskId = undefined;
    const collected = await session.artifacts.collect(taskId);
    // A page may carry a typed secret in an address (a form sent with GET): never recorded.
    const files = collected.files.map((f) => ({ ...f, source: mask(sessionId, f.source) }));
    const network = collected.network.map((n) => ({ ...n, url: mask(sessionId, n.url) }));
    try {
      await store.tasks.saveArtifacts(taskId, { files, network: network.length ? [{ id: `net_${taskId}`, taskId, urls: network }] : [] });
    } catch (err) {
      // Not stored (a busy database): kept for the retry, which the workflow makes.
      session.artifacts.restore(taskId, collected);
      throw err;
    }
    return { files: files.length, requests: network.length };
  }

  /** Leases (holdBrowser) running per session: a run that continued as new starts another. */
  const leases = new Map<string, number>();
  /** Whether another lease of the session starts within the time a new run takes to begin. */
  const newerLease = async (sessionId: string): Promise<boolean> => {
    for (let waited = 0; waited < LEASE_HANDOVER_MS; waited += 250) {
      if ((leases.get(sessionId) ?? 0) > 1) return true;
      await sleep(250);
    }
    return (leases.get(sessionId) ?? 0) > 1;
  };

  /** The current task's prompt, parameters and previous tasks per session, as its first step here brought them (see StepRequest). */
  const taskContexts = new Map<string, { taskId: string; params: TaskParams; previousTasks: PreviousTask[] }>();
  /** The step's full input: its own fields and the task's context, brought now or by an earlier step. */
  const stepInput = (request: StepRequest | StepInput): StepInput => {
    if ('params' in request) return request; // a workflow started before steps carried the context once
    const { context, ...step } = request;
    if (context) taskContexts.set(step.sessionId, { taskId: step.taskId, ...context });
    const held = taskContexts.get(step.sessionId);
    if (!held || held.taskId !== step.taskId) {
      throw failureOf('TASK_CONTEXT_UNAVAILABLE', "This worker does not hold the task's prompt and parameters");
    }
    return { ...step, params: held.params, previousTasks: held.previousTasks };
  };

  return {
    /**
     * Opens the session's browser here; `restore` brings back the page and storage saved by
     * the worker that held it; `wake` a hibernated session: its tabs, typed values, scroll
     * positions and the agent's conversation.
     */
    async openBrowser({ sessionId, userId, restore, wake, profile, proxy, policyId }: { sessionId: string; userId: string; restore?: boolean; wake?: boolean; profile?: ProfileSource; proxy?: SessionProxy; policyId?: string }): Promise<void> {
      if (pool.has(sessionId)) return;
      const woken = wake ? await deps.hibernations?.get<Hibernated>(sessionId) : null;
      const snapshot = !woken && (restore || wake) ? await store.snapshots.get(sessionId) : null;
      if (profile && !profiles) throw failureOf('PROFILES_UNAVAILABLE', 'This worker has no profile storage');
      const userDataDir = profile ? await profiles!.materialize(profile, sessionId) : undefined;
      // Restored pages load under the session's policy: its domain guard is on before the first of them.
      const prepare = woken || snapshot ? (context: BrowserContext) => agent.guardContext(context, { policyId, userId }) : undefined;
      try {
        await pool.open(sessionId, { restore: woken?.browser ?? snapshot ?? undefined, userDataDir, userId, proxy, prepare });
      } catch (err) {
        // The workflow decides what a browser that does not open means: never retried here.
        if (isServiceError(err)) throw toTemporalFailure(err, { retry: false });
        throw err;
      }
      // What the session masked on the worker before comes back before anything of its pages goes out.
      if (restore || wake) await vault?.recall(sessionId);
      if (woken) {
        if (woken.memory) agent.restoreMemory(sessionId, woken.memory);
        await deps.hibernations?.remove(sessionId);
        logger.info({ sessionId, tabs: woken.browser.pages?.tabs.length ?? 0 }, 'hibernated session woke on this worker');
      } else if (restore) {
        logger.info({ sessionId, url: snapshot?.url }, 'session restored on this worker');
      }
    },

    /**
     * A session waiting for a person lets its browser go: its storage, tabs, typed values,
     * scroll positions and the agent's conversation are sealed into the database, and the
     * browser closes (the worker's slot is free). A profile session's directory is archived
     * back first. Answers the sealed size in bytes.
     */
    async hibernateBrowser({ sessionId, profile }: { sessionId: string; profile?: ProfileSource }): Promise<{ bytes: number }> {
      if (!deps.hibernations) throw failureOf('INTERNAL_ERROR', 'This worker cannot hibernate sessions');
      // (the workflow never asks it of a session on a profile: its lock is held until the session ends)
      if (profile) throw failureOf('INTERNAL_ERROR', 'A session on a profile or environment keeps its browser while it waits');
      const browser = await pool.hibernationState(sessionId);
      if (!browser) throw failureOf('INSTANCE_LOST', 'The browser of this session is no longer available');
      const bytes = await deps.hibernations.save(sessionId, { browser, memory: agent.saveMemory(sessionId) } satisfies Hibernated);
      agent.forget(sessionId);
      taskContexts.delete(sessionId);
      await pool.close(sessionId);
      // One sealed copy: the hibernation record holds all the snapshot did.
      await store.snapshots.remove(sessionId);
      await onClosed?.(sessionId);
      logger.info({ sessionId, bytes, tabs: browser.pages?.tabs.length ?? 0 }, 'session hibernated: its browser is closed');
      return { bytes };
    },

    /** Closes the session's browser; a profile session's directory is archived back into its profile. */
    async closeBrowser({ sessionId, profile }: { sessionId: string; profile?: ProfileSource }): Promise<void> {
      agent.forget(sessionId);
      taskContexts.delete(sessionId);
      await pool.close(sessionId);
      await store.snapshots.remove(sessionId);
      await deps.hibernations?.remove(sessionId);
      await onClosed?.(sessionId);
      if (profile && profiles) await profiles.persist(profile, sessionId);
    },

    /**
     * Runs for the session's whole life on the worker that holds its browser. Its
     * heartbeat is how the workflow learns the worker died; meanwhile it saves what a
     * restore on another worker needs.
     */
    async holdBrowser({ sessionId }: { sessionId: string }): Promise<void> {
      const ctx = Context.current();
      let saved = '';
      leases.set(sessionId, (leases.get(sessionId) ?? 0) + 1);
      // The heartbeat has its own timer: a snapshot that is slow on a busy worker (many sessions
      // at once) must not make the workflow think the worker is gone.
      const heart = setInterval(() => {
        if (pool.has(sessionId)) ctx.heartbeat();
      }, LEASE_BEAT_MS);
      ctx.heartbeat();
      try {
      let takenAt = 0;
      while (!ctx.cancellationSignal.aborted) {
        if (!pool.has(sessionId)) return;
        const changedAt = pool.get(sessionId)?.changedAt ?? Date.now();
        // An idle session costs no snapshot: only one whose pages changed since the last (or long ago).
        if (changedAt >= takenAt || Date.now() - takenAt >= SNAPSHOT_QUIET_MS) {
          takenAt = Date.now();
          try {
            const taken = await pool.snapshot(sessionId);
            // A page address or a site's storage may hold a typed secret: stored masked.
            const snap = taken && { url: mask(sessionId, taken.url), storageState: mask(sessionId, taken.storageState) };
            const key = snap ? `${snap.url}\n${snap.storageState}` : '';
            if (snap && key !== saved) {
              await store.snapshots.save(sessionId, snap.url, snap.storageState);
              saved = key;
            }
          } catch (err) {
            logger.debug({ sessionId, err: String(err) }, 'snapshot skipped');
          }
        }
        await Promise.race([sleep(SNAPSHOT_CHECK_MS), ctx.cancelled.catch(() => undefined)]);
      }
      if (ctx.cancellationDetails?.notFound && !(await newerLease(sessionId))) {
        // The workflow is gone (terminated from outside, or its history deleted): nothing
        // else would close this browser. Its profile directory goes unarchived; the stored
        // profile stays as it was before the session, and its lock is freed by the sweeper.
        // (A run that continued as new is not gone: its next run holds a lease of its own.)
        logger.warn({ sessionId }, 'session workflow gone; its browser is closed');
        agent.forget(sessionId);
        await pool.close(sessionId);
        await store.snapshots.remove(sessionId).catch(() => undefined);
        await onClosed?.(sessionId).catch(() => undefined);
        await profiles?.discard?.(sessionId).catch(() => undefined);
      }
      await ctx.cancelled; // rethrows the cancellation, so Temporal records it as such
      } finally {
        clearInterval(heart);
        const left = (leases.get(sessionId) ?? 1) - 1;
        if (left > 0) leases.set(sessionId, left);
        else leases.delete(sessionId);
      }
    },

    /** Stores the task's downloads and requests with its record; answers only counts (history stays small). */
    async collectArtifacts({ sessionId, taskId }: { sessionId: string; taskId: string }): Promise<{ files: number; requests: number }> {
      return collect(sessionId, taskId);
    },

    /** A human's click, typing or key press on the session's page (page coordinates). */
    async interact({ sessionId, action, taskId, userId }: { sessionId: string; action: InteractionAction; taskId?: string; userId?: string }): Promise<void> {
      const session = pool.get(sessionId);
      if (!session) throw failureOf('INSTANCE_LOST', 'The browser of this session is no longer available');
      const { page } = session;
      session.changedAt = Date.now();
      let name: ManualAction;
      let target: string | undefined;
      // During a task, what the person does goes into its recording, described like the agent's actions.
      const urlBefore = page.url();
      const facts = await manualStepFacts(page, action);
      const recording = deps.recorder && taskId && userId ? { urlBefore, ...facts } : undefined;
      // Typed by hand into a secret field: masked from now on wherever the session's data goes (the page may put it in an address).
      if (action.type === 'TYPE' && facts.args.secret) {
        vault?.maskAlso(sessionId, 'typed_by_hand', action.text);
        await vault?.flush(sessionId);
      }
      switch (action.type) {
        case 'CLICK':
          await page.mouse.click(action.x, action.y);
          [name, target] = ['manual_click', `(${action.x}, ${action.y})`];
          break;
        case 'DOUBLE_CLICK':
          await page.mouse.dblclick(action.x, action.y);
          [name, target] = ['manual_double_click', `(${action.x}, ${action.y})`];
          break;
        case 'TYPE':
          if (action.humanLike) {
            // A person's rhythm: 40-150 ms between keys, not a fixed beat; all of it within HUMAN_TYPE_MAX_MS.
            const keys = [...action.text];
            const delays = humanTypingDelays(keys.length);
            const deadline = Date.now() + HUMAN_TYPE_MAX_MS;
            for (const [i, ch] of keys.entries()) {
              await page.keyboard.type(ch);
              if (Date.now() < deadline) await sleep(delays[i]);
            }
          } else {
            await page.keyboard.type(action.text);
          }
          // What a human types may be a password: the event says how much, not what.
          [name, target] = ['manual_type', `${[...action.text].length} characters`];
          break;
        case 'KEY_PRESS':
          await page.keyboard.press(action.key);
          [name, target] = ['manual_key_press', action.key];
          break;
        default:
          return;
      }
      await events.message(sessionId, { type: 'action', data: { name, target } });
      if (recording && taskId && userId) {
        const step = { by: 'human' as const, action: name, args: recording.args, element: recording.element, urlBefore: recording.urlBefore, urlAfter: page.url(), outcome: 'ok' as const, summary: target };
        await deps.recorder!.add({ userId, sessionId, taskId }, maskedStep(step, (text) => mask(sessionId, text)));
      }
    },

    async agentStep(request: StepRequest | StepInput): Promise<StepResult & { cost: number }> {
      const input = stepInput(request);
      const ctx = Context.current();
      const timer = setInterval(() => ctx.heartbeat(), HEARTBEAT_EVERY_MS);
      const log = logger.child({ sessionId: input.sessionId, taskId: input.taskId, step: input.stepNo });
      const timing = workerMetrics.stepStarted();
      const spent = { inputTokens: 0, outputTokens: 0 };
      const heard: { said?: string } = {};
      let charged = false;
      try {
        const session = pool.get(input.sessionId);
        if (session) session.billedTaskId = input.taskId;
        const result = await agent.step(input, ctx.cancellationSignal, log, spent, heard);
        // (a one-time code typed in the step is masked from now on, on any worker)
        await vault?.flush(input.sessionId);
        if (session) session.changedAt = Date.now();
        await chargeStep(input, result.cost);
        charged = true;
        const proxy = session ? await deps.meter?.takeForStep(session) : undefined;
        if (proxy) {
          // Managed proxy traffic since the previous step (already charged as it flowed), reported with the step.
          result.proxy = proxy;
          result.cost = Math.round((result.cost + proxy.cost) * 1e9) / 1e9;
        }
        // The task waits for a person now: its recording so far is there for them to look at.
        if (result.kind === 'human_input') await deps.recorder?.settle(input.taskId);
        if (result.kind === 'done') {
          // The task's downloads and requests are stored before the workflow hears of the
          // end, so the answer goes out without another activity round trip.
          try {
            await collect(input.sessionId, input.taskId);
            result.artifactsCollected = true;
          } catch (err) {
            log.warn({ err }, 'downloads and requests not collected with the last step; the workflow collects them');
          }
        }
        timing.ended(result);
        return result;
      } catch (err) {
        timing.failed(ctx.cancellationSignal.aborted);
        // The model calls made before the step stopped were paid for all the same.
        if (!charged) await chargeStep(input, agent.costOf(spent));
        // Cancelled (pause, stop, takeover, timeout): the tokens already used go back with the cancellation.
        if (ctx.cancellationSignal.aborted) {
          throw new CancelledFailure('The agent step was cancelled', [{ usage: spent, cost: agent.costOf(spent), ...(heard.said ? { said: heard.said } : {}) } satisfies CancelledStep]);
        }
        if (isServiceError(err)) {
          const message = mask(input.sessionId, err.message);
          log.warn({ code: err.code, err: message }, 'agent step failed');
          const details = err.details ? vault?.maskDeep(input.sessionId, err.details) ?? err.details : undefined;
          throw toTemporalFailure(err, { message, details });
        }
        const message = mask(input.sessionId, err instanceof Error ? err.message : String(err));
        log.error({ err: message }, 'agent step crashed');
        throw toTemporalFailure(err, { message });
      } finally {
        clearInterval(timer);
      }
    },
  };
}

export type BrowserActivities = ReturnType<typeof createBrowserActivities>;

/**
 * What a person's action is recorded with: the element under a click, described before the
 * click changes the page; what was typed, unless the focused field is a secret one (a
 * password, a one-time code), whose text is never recorded.
 */
async function manualStepFacts(page: Page, action: InteractionAction): Promise<{ args: Record<string, unknown>; element?: ElementDescription }> {
  switch (action.type) {
    case 'CLICK':
    case 'DOUBLE_CLICK':
      return { args: { x: action.x, y: action.y }, element: await describeAtPoint(page.mainFrame(), action.x, action.y) };
    case 'TYPE': {
      const secret = await focusedIsSecret(page).catch(() => true);
      return { args: secret ? { text: null, secret: true } : { text: action.text } };
    }
    case 'KEY_PRESS':
      return { args: { key: action.key } };
    default:
      return { args: {} };
  }
}

/** Frames inside frames followed at most this deep to the focused element (deeper: taken for secret). */
const MAX_FOCUS_DEPTH = 10;

/**
 * Whether what a person types goes into a secret field: the focused element, followed into
 * open shadow roots and through frames (a frame's own focused element, whatever its origin),
 * is a password or one-time-code field, a card number, or a field a secret was typed into.
 */
async function focusedIsSecret(page: Page): Promise<boolean> {
  let frame = page.mainFrame();
  for (let depth = 0; depth < MAX_FOCUS_DEPTH; depth++) {
    const handle = await frame.evaluateHandle(() => {
      let el = document.activeElement;
      while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
      return el;
    });
    try {
      const el = handle.asElement();
      if (!el) return false;
      const inner = await el.contentFrame();
      if (!inner) return await el.evaluate(isSecretField, STATE_KEY);
      frame = inner;
    } finally {
      await handle.dispose();
    }
  }
  return true;
}

/** Runs in the page: whether a field is one whose value is secret. */
function isSecretField(el: Element, stateKey: string): boolean {
  const field = el as HTMLInputElement;
  const marked = (window as unknown as Record<string, { secrets?: WeakSet<Element> } | undefined>)[stateKey]?.secrets?.has(el);
  return field.type === 'password' || /one-time-code|cc-number|cc-csc/.test(field.autocomplete ?? '') || !!marked;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** How long a lease whose run is gone waits for the run that continued it as new. */
const LEASE_HANDOVER_MS = 15_000;

/** What a hibernated session saved (sealed): its browser and the agent's memory of its task. */
interface Hibernated {
  browser: RestoreState;
  memory?: SavedMemory;
}
