import { fitHistory, historyTokens, observationBudget } from './context-budget';
import type { LlmMessage } from './llm/types';

const obs = (n: number, size = 400) => ({ role: 'user' as const, content: `Observation (step ${n}):\n${'x'.repeat(size)}` });
const turn = (n: number, size = 200): LlmMessage[] => [
  { role: 'assistant', content: `thought ${n}`, toolCalls: [{ id: `c${n}`, name: 'click_element', arguments: '{"index":1}' }] },
  { role: 'tool', toolCallId: `c${n}`, content: `Clicked ${'y'.repeat(size)}` },
];

describe('the context budget', () => {
  it("gives the observation at most the configured budget and a share of what the fixed parts leave", () => {
    expect(observationBudget(100_000, 2000, 6000)).toBe(6000);
    expect(observationBudget(7424, 2400, 6000)).toBe(3014);
    expect(observationBudget(1000, 2000, 6000)).toBe(400);
  });

  it('leaves a history that fits as it is', () => {
    const messages: LlmMessage[] = [{ role: 'user', content: 'New task: a' }, obs(1)];
    const before = JSON.stringify(messages);
    expect(fitHistory(messages, 10_000, 1000)).toBe(historyTokens(messages));
    expect(JSON.stringify(messages)).toBe(before);
  });

  it("drops earlier tasks' turns first, then this task's oldest turns with a note, never the prompt or the latest observation", () => {
    const messages: LlmMessage[] = [
      { role: 'user', content: 'New task: earlier one' },
      ...turn(0),
      { role: 'user', content: 'New task: this one' },
      ...turn(1),
      ...turn(2),
      ...turn(3),
      obs(4),
    ];
    const used = fitHistory(messages, 1000 + 300, 1000);
    expect(used).toBeLessThanOrEqual(300);
    expect(messages[0].content).toBe('New task: this one');
    expect(messages[1].content).toMatch(/^\[\d earlier steps? of this task omitted to fit the context\]$/);
    expect(messages.at(-1)!.content.startsWith('Observation (step 4)')).toBe(true);
    // Every tool result still follows its call.
    messages.forEach((m, i) => {
      if (m.role === 'tool') expect(messages[i - 1]).toMatchObject({ role: 'assistant', toolCalls: [{ id: m.toolCallId }] });
    });
    expect(used).toBe(historyTokens(messages));
  });

  it('cuts the end of the latest observation when nothing else is left to drop', () => {
    const messages: LlmMessage[] = [{ role: 'user', content: 'New task: read' }, obs(1, 8000)];
    const used = fitHistory(messages, 1000 + 800, 1000);
    expect(used).toBeLessThanOrEqual(800);
    expect(messages[1].content).toMatch(/^Observation \(step 1\):\nxxx/);
    expect(messages[1].content).toMatch(/\[the rest of the observation is cut to fit the context\]$/);
  });
});
