/**
 * A replayed task's steps, performed from its recording without the model, until the
 * recording ends or cannot be followed: then the agent takes over.
 */
import { z } from 'zod';
import { findAgain, samePage, stepLine, type FoundElement } from '../recording/replay';
import type { RecordedStep } from '../contracts/recording';
import { act, ReplayMismatch, type ActionRequest } from './act';
import type { AgentStepResult, StepContext } from './step-context';
import type { ReplayProgress } from './task-memory';
import { abortable } from './tools/abort';
import { toolNamed } from './tools';
import { manualActions } from './tools/manual-actions';
import type { AgentTool } from './types';

/** A replayed step spends no model tokens and no time observing or deciding (a fresh count for each step). */
function nothingSpent(): Omit<ActionRequest, 'tool' | 'args'> {
  return { usage: { inputTokens: 0, outputTokens: 0 }, cost: 0, observeMs: 0, modelMs: 0, callId: '' };
}

/**
 * A replayed task's next step: the page checked (the recorded address), the element found
 * again by its description. Undefined when the replay cannot go on: the agent is told why
 * and what remains, and this step goes on with the model.
 */
export async function replayNext(step: StepContext): Promise<AgentStepResult | undefined> {
  const progress = step.memory.replay!;
  const recorded = progress.nextStep;
  if (!recorded) return finishReplay(step, progress);
  const url = step.session.page.url();
  if (recorded.action !== 'navigate' && !samePage(url, recorded.urlBefore)) return handOver(step, `it was recorded on ${recorded.urlBefore}, but the page is now ${url}`);
  let pinned: FoundElement | undefined;
  if (recorded.element) {
    pinned = (await findAgain(step.session.page, recorded.element)) ?? undefined;
    if (!pinned) return handOver(step, `its element (${recorded.element.role} "${recorded.element.name || recorded.element.text || recorded.element.css}") is no longer on the page`);
  }
  const { tool, args } = replayedCall(recorded);
  if (!tool) return handOver(step, `the recorded action ${recorded.action} cannot be performed again as recorded`);
  try {
    const result = await act(step, { ...nothingSpent(), tool, args, replay: { step: recorded, pinned } });
    progress.stepReplayed(stepLine(recorded));
    step.log.info({ action: recorded.action, strategy: pinned?.strategy }, 'recorded step replayed');
    return result;
  } catch (err) {
    if (!(err instanceof ReplayMismatch)) throw err;
    return handOver(step, err.message);
  }
}

/** Every recorded step was performed: the task ends as recorded, or its answer is read off the page. */
async function finishReplay(step: StepContext, progress: ReplayProgress): Promise<AgentStepResult | undefined> {
  const { plan } = progress;
  if (plan.handOverAt) return handOver(step, `the recording goes on with ${stepLine(plan.handOverAt)}, which needs you`);
  if (!plan.done) return handOver(step, 'the recording ends before the task did');
  if (plan.needsAnswer) {
    // The steps are done; the answer is read off the page as it is now, by one model call.
    progress.stop();
    step.memory.answerOnly = true;
    step.memory.tell(
      step.mask(
        `The recorded steps of this task were performed again without you:\n${numbered(progress.done).join('\n')}\nThe page below is where they ended. Give the task's answer from it now by calling done.`,
      ),
    );
    return undefined;
  }
  return act(step, { ...nothingSpent(), tool: toolNamed('done')!, args: plan.done.args, replay: { step: plan.done } });
}

/** The replay stops here: the agent takes over with the original prompt, what was replayed and what remains as a hint. */
function handOver(step: StepContext, reason: string): undefined {
  const progress = step.memory.replay!;
  progress.stop();
  const rest = numbered(progress.remaining.map(stepLine));
  step.memory.tell(
    step.mask(
      `This task replays an earlier run of it. ${progress.done.length ? `These recorded steps were performed again:\n${numbered(progress.done).join('\n')}\n` : ''}` +
        `The next recorded step could not be performed: ${reason}. Take over from here and finish the task.` +
        (rest.length ? `\nWhat the earlier run did from here (a hint only: the page may have changed):\n${rest.join('\n')}` : ''),
    ),
  );
  step.log.info({ reason: step.mask(reason), replayed: progress.done.length }, 'replay handed over to the agent');
  return undefined;
}

/** `1. first`, `2. second`... */
function numbered(lines: string[]): string[] {
  return lines.map((line, index) => `${index + 1}. ${line}`);
}

/** A person's typing, performed again: the same keys into whatever has the focus (never offered to the model). */
const typeFocusedTool: AgentTool<z.ZodObject<{ text: z.ZodString }>, 'manual_type'> = {
  name: 'manual_type',
  description: 'Types into the focused element',
  schema: z.object({ text: z.string() }),
  async execute(toolContext, { text }) {
    await abortable(toolContext.page.keyboard.type(text), toolContext.signal);
    return { summary: `Typed ${[...text].length} characters`, target: `${[...text].length} characters` };
  },
  async policyFacts() {
    return {};
  },
  recording: { index: 'none' },
  playwright: manualActions.manual_type.playwright,
};

/** The tool and arguments that perform a recorded step again (a human's click is a click on the same element). */
function replayedCall(recorded: RecordedStep): { tool?: AgentTool; args: unknown } {
  const index = recorded.element ? { index: 1 } : {};
  switch (recorded.action) {
    case 'manual_click':
      return { tool: toolNamed('click_element'), args: index };
    case 'manual_key_press':
      return { tool: toolNamed('send_keys'), args: { keys: String(recorded.args.key ?? '') } };
    case 'manual_type':
      // A person's typing into a secret field was not recorded: only the agent can type it again.
      return typeof recorded.args.text === 'string' ? { tool: typeFocusedTool, args: { text: recorded.args.text } } : { args: {} };
    default: {
      const tool = toolNamed(recorded.action);
      if (!tool) return { args: {} };
      const parsed = tool.schema.safeParse({ ...recorded.args, ...index });
      return parsed.success ? { tool, args: parsed.data } : { args: {} };
    }
  }
}
