import type { ChatCompletionRequest } from '../../contracts/schemas/chat.schema';
import type { TimelineEntry } from '../../contracts/events';

type ChatMessage = ChatCompletionRequest['messages'][number];

/** The text of a message: a string, or the text parts of a content array. */
export function messageText(m: ChatMessage): string {
  if (typeof m.content === 'string') return m.content;
  if (Array.isArray(m.content)) return m.content.map((p) => (typeof p.text === 'string' ? p.text : '')).filter(Boolean).join('\n');
  return '';
}

/**
 * The task's prompt: the last user message is the task; the system message and the
 * earlier messages follow it as context, oldest first. Null when there is no user message
 * with text.
 */
export function taskPrompt(messages: ChatMessage[]): string | null {
  let last = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].role === 'user' && messageText(messages[i]).trim()) {
      last = i;
      break;
    }
  }
  if (last < 0) return null;
  const task = messageText(messages[last]).trim();
  const context = messages
    .slice(0, last)
    .map((m) => ({ role: m.role, text: messageText(m).trim() }))
    .filter((m) => m.text);
  if (!context.length) return task;
  return `${task}\n\nContext from the conversation before this request (oldest first):\n${context.map((m) => `[${m.role}] ${m.text}`).join('\n')}`;
}

const COMMENT_MAX = 500;
const oneLine = (s: string) => {
  const flat = s.replace(/[\r\n]+/g, ' ').trim();
  return flat.length > COMMENT_MAX ? `${flat.slice(0, COMMENT_MAX - 1)}…` : flat;
};

/** An SSE comment line for an event of the session that shows the agent's progress; null for the others. */
export function progressComment(entry: TimelineEntry): string | null {
  if (entry.event !== 'message') return null;
  const m = entry.payload;
  switch (m.type) {
    case 'agent':
      return `: agent ${oneLine(m.content)}\n\n`;
    case 'action':
      return `: action ${oneLine(m.data.target ? `${m.data.name} ${m.data.target}` : m.data.name)}\n\n`;
    case 'response_update':
      return `: update ${oneLine(m.data.message)}\n\n`;
    default:
      return null;
  }
}

/** The answer cut into a few content deltas at word boundaries, about `size` characters each. */
export function contentDeltas(text: string, size = 80): string[] {
  if (!text) return [];
  const out: string[] = [];
  let rest = text;
  while (rest.length > size) {
    let cut = rest.lastIndexOf(' ', size);
    if (cut <= 0) cut = size;
    out.push(rest.slice(0, cut + (rest[cut] === ' ' ? 1 : 0)));
    rest = rest.slice(cut + (rest[cut] === ' ' ? 1 : 0));
  }
  if (rest) out.push(rest);
  return out;
}
