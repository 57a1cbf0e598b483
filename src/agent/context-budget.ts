import type { LlmMessage } from './llm/types';

/**
 * The model's context as a budget in tokens (LLM_CONTEXT_TOKENS): the system prompt and the
 * tools are fixed, the observation gets a share, the history gets the rest. What is dropped
 * first when a prompt would not fit:
 * 1. earlier observations (always: only the latest page matters; they become a one-line marker),
 * 2. earlier tasks' turns of the session, oldest first,
 * 3. this task's oldest turns (a model call with its results), replaced by a note of how many,
 * 4. the end of the latest observation.
 * The current task's prompt and the latest observation's start are never dropped.
 */

/** Tokens of a text, estimated (about 4 characters each, as the providers' tokenizers give for English and markup). */
export const tokensOf = (text: string): number => Math.ceil(text.length / 4);

/** A screenshot's share of the prompt, in tokens. */
const IMAGE_TOKENS = 1000;
/** The observation may take at most this share of what the fixed parts leave. */
const OBSERVATION_SHARE = 0.6;
const MIN_OBSERVATION_TOKENS = 400;
const OMITTED = /^\[(\d+) earlier steps? of this task omitted to fit the context\]$/;

export function messageTokens(message: LlmMessage): number {
  let chars = message.content.length;
  if (message.role === 'assistant') for (const call of message.toolCalls ?? []) chars += call.name.length + call.arguments.length + 16;
  return Math.ceil(chars / 4) + (message.role === 'user' && message.image ? IMAGE_TOKENS : 0) + 4;
}

export const historyTokens = (messages: LlmMessage[]): number => messages.reduce((total, message) => total + messageTokens(message), 0);

/** How many tokens this step's observation may use. */
export function observationBudget(contextTokens: number, fixedTokens: number, configured: number): number {
  return Math.max(MIN_OBSERVATION_TOKENS, Math.min(configured, Math.floor((contextTokens - fixedTokens) * OBSERVATION_SHARE)));
}

const isTaskPrompt = (message: LlmMessage) => message.role === 'user' && message.content.includes('New task:');

/**
 * Drops what the budget cannot hold, in the order above, in place. `fixedTokens` is what the
 * system prompt and the tools take. Returns the tokens the messages now take.
 */
export function fitHistory(messages: LlmMessage[], contextTokens: number, fixedTokens: number): number {
  const room = contextTokens - fixedTokens;
  let used = historyTokens(messages);
  if (used <= room) return used;
  // 2. Earlier tasks' turns (everything before this task's prompt), oldest first; their prompts last.
  while (used > room && indexOfCurrent(messages) > 0) {
    const earlier = messages.findIndex((message, position) => position < indexOfCurrent(messages) && !isTaskPrompt(message));
    const dropped = earlier >= 0 ? earlier : messages.findIndex((message, position) => position < indexOfCurrent(messages) && isTaskPrompt(message));
    if (dropped < 0 || dropped >= indexOfCurrent(messages)) break;
    messages.splice(dropped, 1);
    dropOrphanedResults(messages, dropped);
    used = historyTokens(messages);
  }
  // 3. This task's oldest turns: from a model call up to the next one, never the latest observation.
  const start = indexOfCurrent(messages) + 1;
  while (used > room) {
    const first = messages.findIndex((message, position) => position >= start && message.role === 'assistant');
    if (first < 0) break;
    let end = first + 1;
    while (end < messages.length && messages[end].role !== 'assistant') end++;
    if (end >= messages.length) break; // the latest turn: its observation stays
    messages.splice(first, end - first);
    noteOmitted(messages, start);
    used = historyTokens(messages);
  }
  // 4. The latest observation's end.
  if (used > room) {
    const last = messages[messages.length - 1];
    if (last?.role === 'user') {
      const cutNote = '\n[the rest of the observation is cut to fit the context]';
      const others = used - messageTokens(last);
      const keep = Math.max(800, (room - others - messageTokens({ role: 'user', content: cutNote, image: last.image })) * 4);
      if (keep < last.content.length) {
        last.content = `${last.content.slice(0, keep)}${cutNote}`;
        used = historyTokens(messages);
      }
    }
  }
  return used;
}

function indexOfCurrent(messages: LlmMessage[]): number {
  return findLastIndex(messages, isTaskPrompt);
}

/** A tool result whose call was dropped would be refused by providers: it goes too. */
function dropOrphanedResults(messages: LlmMessage[], from: number): void {
  while (messages[from]?.role === 'tool') messages.splice(from, 1);
}

/** Keeps one note after the task prompt counting the steps omitted. */
function noteOmitted(messages: LlmMessage[], at: number): void {
  const existing = messages[at];
  const match = existing?.role === 'user' ? OMITTED.exec(existing.content) : null;
  const omitted = (match ? Number(match[1]) : 0) + 1;
  const content = `[${omitted} earlier step${omitted === 1 ? '' : 's'} of this task omitted to fit the context]`;
  if (match) existing.content = content;
  else messages.splice(at, 0, { role: 'user', content });
}

function findLastIndex<T>(items: T[], pred: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (pred(items[i])) return i;
  return -1;
}
