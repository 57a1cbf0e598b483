/**
 * An answer of the model that carries several actions: the first is performed at once, the
 * others at the next steps without a model call (each one its own step: policed, recorded,
 * pictured, counted), as long as the page did not change beyond the elements acted on. The
 * list stops at the first action that fails, waits for a human, or changes the page; every
 * action not performed is answered with why.
 */
import { observePage } from './observe/observe';
import { pageChange } from './observe/page-diff';
import { act } from './act';
import { actionName } from './list-order';
import type { ActionList, ListedAction } from './task-memory';
import type { AgentStepResult, StepContext } from './step-context';
import { indexOf } from './tools/fields';

/**
 * After the list's first action: the rest is kept for the next steps when that action was
 * performed and the step goes on; otherwise each is answered as not performed.
 */
export function keepRest(step: StepContext, first: ListedAction, rest: ListedAction[], basis: string, result: AgentStepResult, failed: boolean): void {
  if (!rest.length) return;
  const list: ActionList = { actions: rest, basis, acted: [], last: actionName(first.tool.name, first.args) };
  step.memory.list = list;
  const stop = stopReason(list, result, failed);
  if (stop) step.memory.dropList(stop);
  else noteActed(list, first.args);
}

/**
 * The list's next action, performed if the page is still the one the model chose it on
 * (beyond the elements acted on); undefined when there is none or the list stopped (the
 * model then decides on the page as it is).
 */
export async function performListed(step: StepContext): Promise<AgentStepResult | undefined> {
  const { memory } = step;
  const list = memory.list;
  if (!list?.actions.length) {
    memory.list = undefined;
    return undefined;
  }
  const observeStart = performance.now();
  const observation = await observePage(step.session.page, { tokenBudget: memory.observationBudget ?? step.options.observationTokenBudget });
  const changed = pageChange(list.basis, observation.text, list.acted);
  if (changed) {
    // (the page moved on, as a list's last action often means it to: nothing to weigh)
    memory.dropList(`the list stopped after ${list.last}, which changed the page (${changed}). Look at the page again.`, false);
    return undefined;
  }
  const [next] = list.actions;
  const observeMs = performance.now() - observeStart;
  // the action's checks read the page as it is now (a list's field shows the option chosen by
  // the action before: "Save ticket" was held for the priority still on Normal); the model's
  // next observation still says what changed since the one it chose on
  const basis = memory.lastObservation;
  memory.lastObservation = observation.text;
  let result: AgentStepResult;
  try {
    result = await act(step, { tool: next.tool, args: next.args, callId: next.callId, usage: { inputTokens: 0, outputTokens: 0 }, cost: 0, observeMs, modelMs: 0 });
  } finally {
    memory.lastObservation = basis;
  }
  list.actions.shift();
  list.last = actionName(next.tool.name, next.args);
  noteActed(list, next.args);
  const stop = stopReason(list, result, memory.failuresInRow > 0 || memory.held);
  if (stop) memory.dropList(stop);
  else if (!list.actions.length) memory.list = undefined;
  step.log.info({ action: next.tool.name, left: list.actions.length }, 'listed action performed without a model call');
  return result;
}

/** Why the list stops after an action: it failed or was not performed, or the step does not go on. */
function stopReason(list: ActionList, result: AgentStepResult, failed: boolean): string | undefined {
  const last = list.last;
  if (failed) return `the list stopped because ${last} before it was not performed.`;
  if (result.kind !== 'continue') return `the list stopped after ${last}, which ${result.kind === 'done' ? 'ended the task' : 'waits for a human'}.`;
  return undefined;
}

function noteActed(list: ActionList, args: unknown): void {
  const index = indexOf(args);
  if (index !== undefined) list.acted.push(index);
}
