/** The human's answer to an action waiting for approval. */
import { act } from './act';
import { approves } from './action-gate';
import { approvalMoved } from './approval-binding';
import { emit, toolContextOf, type AgentStepResult, type StepContext } from './step-context';
import type { PendingApproval } from './task-memory';
import { toolNamed } from './tools';

/** An approving answer performs the action (if its element is still the one approved); any other refuses it. */
export async function settleApproval(step: StepContext, pending: PendingApproval, answer: string): Promise<AgentStepResult> {
  const { input, memory, log } = step;
  const tool = toolNamed(pending.tool)!;
  const usage = { inputTokens: 0, outputTokens: 0 };
  if (approves(answer)) {
    const moved = await approvalMoved(toolContextOf(step), pending.element, pending.args);
    if (moved) {
      memory.answerCall(pending.callId, step.mask(`Not performed: ${moved}. Look at the page again and ask again if the action is still needed.`));
      emit(step, { type: 'action', taskId: input.taskId, data: { name: tool.name, refused: true, reason: 'the element changed after the approval was asked' } });
      log.info({ action: tool.name }, 'approved action not performed: its element changed');
      return { usage, cost: 0, kind: 'continue', action: { name: tool.name, target: 'element changed' } };
    }
    log.info({ action: tool.name }, 'approved by the human');
    return act(step, { tool, args: pending.args, callId: pending.callId, usage, cost: 0, observeMs: 0, modelMs: 0, approved: true });
  }
  memory.answerCall(
    pending.callId,
    `Not performed: the human did not approve it (their answer: ${JSON.stringify(answer)}). Find another way, or call done with success=false if there is none.`,
  );
  emit(step, { type: 'action', taskId: input.taskId, data: { name: tool.name, refused: true, reason: 'not approved by the human' } });
  log.info({ action: tool.name }, 'refused by the human');
  return { usage, cost: 0, kind: 'continue', action: { name: tool.name, target: 'not approved' } };
}
