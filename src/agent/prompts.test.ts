import { REMINDER_MAX_CHARS, taskReminder } from './prompts';

describe('taskReminder', () => {
  it('says the task again on one line', () => {
    expect(taskReminder('Add the Green Mug to the cart.\n  Add nothing else.')).toBe('Your task: Add the Green Mug to the cart. Add nothing else.');
  });

  it('cuts a long prompt at its limit', () => {
    const line = taskReminder('x'.repeat(REMINDER_MAX_CHARS + 50));
    expect(line).toBe(`Your task: ${'x'.repeat(REMINDER_MAX_CHARS - 1)}…`);
  });

  it('names a task given no prompt as the first message does', () => {
    expect(taskReminder('')).toBe('Your task: (no prompt given: describe the current page)');
  });
});
