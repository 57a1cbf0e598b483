import { contentDeltas, progressComment, taskPrompt } from './chat-prompt';

describe('taskPrompt', () => {
  it('takes the last user message as the task and the earlier messages as context', () => {
    const prompt = taskPrompt([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'first' },
      { role: 'assistant', content: 'ok' },
      { role: 'user', content: [{ type: 'text', text: 'find the price' }, { type: 'image_url' }] },
    ]);
    expect(prompt).toBe('find the price\n\nContext from the conversation before this request (oldest first):\n[system] Be brief.\n[user] first\n[assistant] ok');
  });

  it('is the message alone without context, and null without a user message with text', () => {
    expect(taskPrompt([{ role: 'user', content: ' go ' }])).toBe('go');
    expect(taskPrompt([{ role: 'system', content: 'x' }])).toBeNull();
    expect(taskPrompt([{ role: 'user', content: '   ' }])).toBeNull();
  });
});

describe('contentDeltas', () => {
  it('cuts at word boundaries and keeps every character', () => {
    const text = 'word '.repeat(50).trim();
    const parts = contentDeltas(text, 20);
    expect(parts.join('')).toBe(text);
    expect(parts.length).toBeGreaterThan(5);
    expect(parts.every((p) => p.length <= 21)).toBe(true);
    expect(contentDeltas('')).toEqual([]);
    expect(contentDeltas('x'.repeat(30), 10)).toEqual(['x'.repeat(10), 'x'.repeat(10), 'x'.repeat(10)]);
  });
});

describe('progressComment', () => {
  const at = { sessionId: 's', seq: 1, timestamp: 0 };
  it('turns agent, action and update events into one-line SSE comments', () => {
    expect(progressComment({ ...at, event: 'message', payload: { type: 'action', data: { name: 'navigate', target: 'https://x.test' } } })).toBe(': action navigate https://x.test\n\n');
    expect(progressComment({ ...at, event: 'message', payload: { type: 'agent', content: 'line one\nline two' } })).toBe(': agent line one line two\n\n');
    expect(progressComment({ ...at, event: 'end_session', payload: { reason: 'completed' } })).toBeNull();
  });
});
