import { taskEnvelope } from '../contracts/envelopes';
import { TERMINAL_TASK_STATUSES, type TaskView } from '../contracts/session-types';
import type { DeliveryTarget } from '../contracts/trigger-types';
import { fileLinks } from '../files/links';
import { failedRunEnvelope, type DeliverySubject } from '../webhooks/payloads';
import type { DeliveryContext } from './delivery-context';

/** What is delivered, read from the stored outcome; null while there is none yet. */
export async function subjectOf(ctx: DeliveryContext, target: DeliveryTarget): Promise<DeliverySubject | null> {
  if (target.kind === 'task') {
    const view = await ctx.store.tasks.get(target.sessionId, target.taskId);
    return view && TERMINAL_TASK_STATUSES.includes(view.status) ? fromTask(ctx, view) : null;
  }
  const run = await ctx.runs.getById(target.runId);
  if (!run || run.status === 'running') return null;
  const trigger = { cronJobId: run.cronJobId, runId: run._id };
  if (run.sessionId && run.taskId) {
    const view = await ctx.store.tasks.get(run.sessionId, run.taskId);
    if (view && TERMINAL_TASK_STATUSES.includes(view.status)) return fromTask(ctx, view, trigger);
  }
  const completedAt = (run.finishedAt ?? run.createdAt).getTime();
  const error = run.error ?? 'The run failed';
  const code = run.code ?? 'RUN_FAILED';
  return { sessionId: run.sessionId, taskId: run.taskId, status: 'failed', message: '', completedAt, envelope: failedRunEnvelope({ sessionId: run.sessionId, taskId: run.taskId, error, code, completedAt }), trigger };
}

/** What is delivered of a finished task (of a trigger's run when `trigger` is given). */
function fromTask(ctx: DeliveryContext, view: TaskView, trigger?: DeliverySubject['trigger']): DeliverySubject {
  return {
    sessionId: view.sessionId,
    taskId: view.taskId,
    status: view.status as DeliverySubject['status'],
    message: view.message ?? '',
    completedAt: view.completedAt ? Date.parse(view.completedAt) : Date.now(),
    envelope: taskEnvelope(fileLinks(ctx.config), view, { withCompletedAt: true }).body,
    trigger,
  };
}
