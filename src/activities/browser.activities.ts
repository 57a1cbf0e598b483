import { ApplicationFailure, Context } from '@temporalio/activity';
import type { AgentRunner } from '../agent/agent';
import type { BrowserPool } from '../browser/pool';
import type { ProfileMaterializer, ProfileSource } from '../profiles/contracts';
import { isServiceError } from '../errors';
import type { Logger } from '../logger';
import type { Store } from '../store/store';
import type { EventPublisher } from '../events/publisher';
import type { InteractionAction, StepInput, StepResult } from '../workflows/types';
import { HUMAN_TYPE_MAX_MS, humanTypingDelays } from '../api/schemas/message.schema';

/** Heartbeats often enough that a stop reaches the step within a second. */
const HEARTBEAT_EVERY_MS = 250;

/** Activities on one browser worker's own task queue: they touch the browsers it holds. */
/** The lease heartbeat (the workflow notices a dead worker after its heartbeat timeout). */
const LEASE_BEAT_MS = 1000;
/** A held session's page and storage are saved every this many beats, for a restore elsewhere. */
const SNAPSHOT_EVERY_BEATS = 2;

export function createBrowserActivities(deps: {
  pool: BrowserPool;
  agent: AgentRunner;
  events: EventPublisher;
  store: Store;
  profiles?: ProfileMaterializer;
  /** Cleans up what the session left on this worker's disk (fetched task files). */
  onClosed?: (sessionId: string) => Promise<void>;
  logger: Logger;
}) {
  const { pool, agent, events, store, profiles, onClosed } = deps;
  const logger = deps.logger.child({ component: 'browser-activities' });

  /** Stores the task's downloads and captured requests on its record. */
  async function collect(sessionId: string, taskId: string): Promise<{ files: number; requests: number }> {
    const session = pool.get(sessionId);
    if (!session) return { files: 0, requests: 0 };
    if (session.artifacts.taskId === taskId) session.artifacts.taskId = undefined;
    const { files, network } = await session.artifacts.collect(taskId);
    await store.tasks.saveArtifacts(taskId, { files, network: network.length ? [{ id: `net_${taskId}`, taskId, urls: network }] : [] });
    return { files: files.length, requests: network.length };
  }

  return {
    /** Opens the session's browser here; `restore` brings back the page and storage saved by the worker that held it. */
    async openBrowser({ sessionId, userId, restore, profile }: { sessionId: string; userId: string; restore?: boolean; profile?: ProfileSource }): Promise<void> {
      if (pool.has(sessionId)) return;
      const snapshot = restore ? await store.snapshots.get(sessionId) : null;
      if (profile && !profiles) throw ApplicationFailure.create({ type: 'PROFILES_UNAVAILABLE', message: 'This worker has no profile storage', nonRetryable: true });
      const userDataDir = profile ? await profiles!.materialize(profile, sessionId) : undefined;
      await pool.open(sessionId, { restore: snapshot ?? undefined, userDataDir, userId });
      if (restore) logger.info({ sessionId, url: snapshot?.url }, 'session restored on this worker');
    },

    /** Closes the session's browser; a profile session's directory is archived back into its profile. */
    async closeBrowser({ sessionId, profile }: { sessionId: string; profile?: ProfileSource }): Promise<void> {
      agent.forget(sessionId);
      await pool.close(sessionId);
      await store.snapshots.remove(sessionId);
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
      for (let beat = 0; !ctx.cancellationSignal.aborted; beat++) {
        if (!pool.has(sessionId)) return;
        ctx.heartbeat();
        if (beat % SNAPSHOT_EVERY_BEATS === 0) {
          try {
            const snap = await pool.snapshot(sessionId);
            const key = snap ? `${snap.url}\n${snap.storageState}` : '';
            if (snap && key !== saved) {
              await store.snapshots.save(sessionId, snap.url, snap.storageState);
              saved = key;
            }
          } catch (err) {
            logger.debug({ sessionId, err: String(err) }, 'snapshot skipped');
          }
        }
        await Promise.race([sleep(LEASE_BEAT_MS), ctx.cancelled.catch(() => undefined)]);
      }
      await ctx.cancelled; // rethrows the cancellation, so Temporal records it as such
    },

    /** Stores the task's downloads and requests with its record; answers only counts (history stays small). */
    async collectArtifacts({ sessionId, taskId }: { sessionId: string; taskId: string }): Promise<{ files: number; requests: number }> {
      return collect(sessionId, taskId);
    },

    /** A human's click, typing or key press on the session's page (page coordinates). */
    async interact({ sessionId, action }: { sessionId: string; action: InteractionAction }): Promise<void> {
      const session = pool.get(sessionId);
      if (!session) throw ApplicationFailure.create({ type: 'INSTANCE_LOST', message: 'The browser of this session is no longer available', nonRetryable: true });
      const { page } = session;
      let name: string;
      let target: string | undefined;
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
    },

    async agentStep(input: StepInput): Promise<StepResult & { cost: number }> {
      const ctx = Context.current();
      const timer = setInterval(() => ctx.heartbeat(), HEARTBEAT_EVERY_MS);
      const log = logger.child({ sessionId: input.sessionId, taskId: input.taskId, step: input.stepNo });
      try {
        const result = await agent.step(input, ctx.cancellationSignal, log);
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
        return result;
      } catch (err) {
        if (ctx.cancellationSignal.aborted) throw err;
        if (isServiceError(err)) {
          log.warn({ code: err.code, err: err.message }, 'agent step failed');
          throw ApplicationFailure.create({ type: err.code, message: err.message, nonRetryable: !err.retryable, details: err.details ? [err.details] : undefined });
        }
        log.error({ err }, 'agent step crashed');
        throw ApplicationFailure.create({ type: 'TASK_FAILED', message: err instanceof Error ? err.message : String(err), nonRetryable: true });
      } finally {
        clearInterval(timer);
      }
    },
  };
}

export type BrowserActivities = ReturnType<typeof createBrowserActivities>;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
