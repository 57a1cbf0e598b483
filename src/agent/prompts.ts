import type { PreviousTask, TaskParams } from '../contracts/session-types';

export function systemPrompt(policyRole?: string | null): string {
  const lines = [
    'You are a browser automation agent. You control a real Chromium browser (viewport 1024x600) to accomplish the user\'s task.',
    'At each step you receive an observation: the URL, the open tabs, the interactive elements as lines "[index] role "label"", and the visible text.',
    'Call one tool per step, or several in order when none depends on the outcome of another (the fields of a form, then its submit): the list stops where the page changes. Refer to elements by their [index] from the latest observation only.',
    'With each tool call, first write one short sentence: what you see on the page and what you do next.',
    'When the task asks for information and the observation shows it, call done with it right away; click only to reach what is not shown yet.',
    'Before calling done, check on the page that the task is really complete (a form sent, a value shown); answer only from what the page shows.',
    'When an action fails you are told why; try another way. Do not repeat a failing action more than twice.',
    'If you need something only a human can give (a password, a one-time code, a CAPTCHA, an approval), call request_human_input and wait for the answer.',
    'When the task is complete, call done with the final answer in the form its parameters ask for. If it cannot be completed, call done with success=false and say why in `message`.',
  ];
  if (policyRole !== undefined) {
    lines.push('An automation policy checks every action before it is performed: a blocked action is not performed and you are told why; find another way the policy allows. Some actions wait for a human\'s approval first.');
    if (policyRole) lines.push(`Instructions of the automation policy:\n${policyRole}`);
  }
  return lines.join('\n');
}

/** Said after the task when the browser starts on its page. */
export const STARTING_PAGE = 'The browser is already on the starting page of the task: the observation shows it.';

export function taskPrompt(
  params: TaskParams,
  previous: PreviousTask[],
  files: { fileId: string; name: string; size: number }[] = [],
  secrets: { name: string; matches: string[]; oneTimeCode?: true }[] = [],
): string {
  const parts: string[] = [];
  if (previous.length) {
    parts.push('Earlier tasks in this session (most recent last):');
    for (const task of previous) parts.push(`- Task: ${task.prompt}\n  Outcome (${task.status}): ${task.result}`);
    parts.push('');
  }
  parts.push(`New task: ${params.prompt || '(no prompt given: describe the current page)'}`);
  // (not its address: a small model read it as a page to open, and opened the page it was on)
  if (params.startingUrl) parts.push(STARTING_PAGE);
  if (files.length) {
    parts.push('Files you can put into file inputs with upload_file:');
    for (const file of files) parts.push(`- ${file.fileId}: ${file.name} (${file.size} bytes)`);
  }
  if (secrets.length) {
    // Instructions with a real placeholder: the local model copied a generic one (<secret>NAME</secret>) word for word.
    const example = `<secret>${secrets[0].name}</secret>`;
    parts.push(`Secrets (you never see their values): put a placeholder such as ${example} as the text of input_text (or the option of select_option) and the real value is typed in, only on the sites listed for it. The placeholders:`);
    for (const secret of secrets) parts.push(`- <secret>${secret.name}</secret> on ${secret.matches.join(', ')}${secret.oneTimeCode ? ' (a one-time code: the code valid at that moment is typed)' : ''}`);
  }
  parts.push(outputInstructions(params));
  return parts.join('\n');
}

/** The longest task prompt said again in full under each observation; a longer one is cut there. */
export const REMINDER_MAX_CHARS = 400;

/**
 * The task said again under each observation after the first: a small model that chose from
 * the page alone pressed a button again and again (the task said one mug) or stopped short.
 */
export function taskReminder(prompt: string | undefined): string {
  const text = (prompt || '(no prompt given: describe the current page)').replace(/\s+/g, ' ').trim();
  return `Your task: ${text.length > REMINDER_MAX_CHARS ? `${text.slice(0, REMINDER_MAX_CHARS - 1)}…` : text}`;
}

function outputInstructions(params: TaskParams): string {
  switch (params.outputType) {
    case 'structured_json':
      return 'When done, give the result in the `result` argument of done: a JSON value matching the JSON Schema of that argument exactly.';
    case 'structured_csv':
      return `When done, give the result in the \`rows\` argument of done: one object per row with the columns ${(params.outputSchema as string[]).join(', ')}.`;
    default:
      return 'The message of done is markdown text.';
  }
}
