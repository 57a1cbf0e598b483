/**
 * The start of a task on this worker: its policy and the domain guard, its files, its
 * prompt, its recording, the recording it replays, and its starting page.
 */
import { maskStrings } from './record-step';
import { TaskFailure } from '../contracts/errors';
import { replayPlan } from '../recording/replay';
import type { StepInput } from '../contracts/session-types';
import { guardNavigations } from './policy/navigation-guard';
import { CompiledPolicy } from './policy/policy';
import { taskPrompt } from './prompts';
import { toolNamed, toolSpecs } from './tools';
import { toolContextOf, type PolicyProvider, type StepContext } from './step-context';

/**
 * Once per task and worker: a step that runs again (after a pause or a takeover) must not
 * reload the starting page over what the human did.
 */
export async function beginTask(step: StepContext): Promise<void> {
  const { input, session, memory, options } = step;
  memory.answerPendingApproval('Not performed: the task ended before the human answered.');
  memory.startTask(input.taskId, toolSpecs(input.params));
  memory.policy = await policyOf(options.policies, input);
  if (memory.policy?.restrictsDomains && !memory.guard) memory.guard = await guardNavigations(session.context);
  if (memory.guard) {
    memory.guard.policy = memory.policy;
    memory.guard.acting = true;
  }
  memory.files = options.files
    ? await options.files.forTask({ userId: input.userId, sessionId: input.sessionId, fileIds: input.params.files, environmentId: input.environmentId })
    : undefined;
  memory.tell(taskPrompt(input.params, input.previousTasks, memory.files?.available() ?? [], step.secrets?.catalogue() ?? []));
  memory.clearReplay();
  await beginRecording(step);
  await planReplay(step);
  if (input.stepNo === 0 && input.params.startingUrl) await openStartingUrl(step, input.params.startingUrl);
}

/** The session's policy; a policy that went missing stops the task rather than run it unprotected. */
async function policyOf(policies: PolicyProvider | undefined, input: StepInput): Promise<CompiledPolicy | null> {
  if (!input.policyId) return null;
  const document = await policies?.get(input.policyId, input.userId);
  if (!document) throw new TaskFailure('POLICY_NOT_FOUND', `The automation policy ${input.policyId} of this session no longer exists; the task does not run without it`, { policyId: input.policyId });
  return new CompiledPolicy(document);
}

/** The task's recording starts with what it was asked (secrets masked). */
async function beginRecording(step: StepContext): Promise<void> {
  const { input, mask } = step;
  const params = input.params;
  await step.options.recorder?.begin(
    { userId: input.userId, sessionId: input.sessionId, taskId: input.taskId },
    {
      prompt: mask(params.prompt),
      startingUrl: params.startingUrl ? mask(params.startingUrl) : null,
      outputType: params.outputType,
      ...(params.outputSchema !== undefined ? { outputSchema: maskStrings(params.outputSchema, mask) } : {}),
    },
  );
}

/** A task that replays a recording reads its steps now. */
async function planReplay(step: StepContext): Promise<void> {
  const { input, memory, options } = step;
  const replay = input.params.replay;
  if (!replay || !options.recordings) return;
  const plan = replayPlan(await options.recordings.list(replay.source, input.userId), input.params);
  memory.startReplay(plan);
  step.log.info({ replayOf: replay.of, source: replay.source, steps: plan.steps.length }, 'task replays a recording');
}

/** The first step opens the starting page, unless the policy blocks it. */
async function openStartingUrl(step: StepContext, url: string): Promise<void> {
  const policy = step.memory.policy;
  const allowed = policy?.checkUrl(url);
  if (allowed?.effect === 'block') {
    throw new TaskFailure('POLICY_BLOCKED', `The startingUrl ${url} is not allowed: ${allowed.reason}`, { url, policyId: policy!.id });
  }
  await toolNamed('navigate')!.execute(toolContextOf(step), { url });
}
