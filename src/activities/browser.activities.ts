import { ApplicationFailure, Context } from '@temporalio/activity';
import type { AgentRunner } from '../agent/agent';
import type { BrowserPool } from '../browser/pool';
import { isServiceError } from '../errors';
import type { Logger } from '../logger';
import type { StepInput, StepResult } from '../workflows/types';

/** Heartbeats often enough that a stop reaches the step within a second. */
const HEARTBEAT_EVERY_MS = 250;

/** Activities on one browser worker's own task queue: they touch the browsers it holds. */
export function createBrowserActivities(deps: { pool: BrowserPool; agent: AgentRunner; logger: Logger }) {
  const { pool, agent } = deps;
  const logger = deps.logger.child({ component: 'browser-activities' });

  return {
    async openBrowser({ sessionId }: { sessionId: string; userId: string }): Promise<void> {
      await pool.open(sessionId);
    },

    async closeBrowser({ sessionId }: { sessionId: string }): Promise<void> {
      agent.forget(sessionId);
      await pool.close(sessionId);
    },

    async agentStep(input: StepInput): Promise<StepResult & { cost: number }> {
      const ctx = Context.current();
      const timer = setInterval(() => ctx.heartbeat(), HEARTBEAT_EVERY_MS);
      const log = logger.child({ sessionId: input.sessionId, taskId: input.taskId, step: input.stepNo });
      try {
        return await agent.step(input, ctx.cancellationSignal, log);
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
