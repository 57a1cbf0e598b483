import type { Logger } from '../logger';
import type { Store } from '../store/store';
import type { WorkerRegistry } from '../workers/worker-registry';
import type { EndReason, SessionStatus, TaskView } from '../workflows/types';
import { TERMINAL_TASK_STATUSES } from '../workflows/types';

/** Activities any worker may run (the shared queue): placement and records. */
export function createSessionActivities(deps: { store: Store; registry: WorkerRegistry; logger: Logger }) {
  const { store, registry } = deps;
  const logger = deps.logger.child({ component: 'session-activities' });

  return {
    async assignWorker({ sessionId, exclude }: { sessionId: string; exclude: string[] }): Promise<{ workerId: string; taskQueue: string } | null> {
      const worker = await registry.pick(exclude);
      logger.info({ sessionId, workerId: worker?.workerId }, worker ? 'browser worker assigned' : 'no browser worker available');
      return worker ? { workerId: worker.workerId, taskQueue: worker.taskQueue } : null;
    },

    async markSession({ sessionId, status, workerId }: { sessionId: string; status: SessionStatus; workerId?: string }): Promise<void> {
      await store.sessions.markStatus(sessionId, status, workerId);
    },

    async saveTask({ userId, task }: { userId: string; task: TaskView }): Promise<void> {
      await store.tasks.save(userId, task);
    },

    /** Records the task's end and charges its cost exactly once. */
    async completeTask({ userId, task }: { userId: string; task: TaskView }): Promise<{ balance: number | null }> {
      if (!TERMINAL_TASK_STATUSES.includes(task.status)) throw new Error(`task ${task.taskId} is not finished`);
      const { balance, charged } = await store.users.chargeTask(userId, task.taskId, task.usage.cost);
      await store.tasks.save(userId, task);
      logger.info({ sessionId: task.sessionId, taskId: task.taskId, status: task.status, cost: task.usage.cost, charged }, 'task finished');
      return { balance };
    },

    async endSession({ sessionId, userId, status, reason }: { sessionId: string; userId: string; status: SessionStatus; reason: EndReason }): Promise<void> {
      const released = await store.sessions.end(sessionId, status, reason);
      if (released) await store.users.releaseSessionSlot(userId);
      logger.info({ sessionId, status, reason }, 'session ended');
    },
  };
}

export type SessionActivities = ReturnType<typeof createSessionActivities>;
