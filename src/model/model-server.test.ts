import { authorized, chooseSlot, type SlotState } from './model-server';

describe('the model role key', () => {
  it('answers every caller when it has none', () => {
    expect(authorized(undefined, undefined)).toBe(true);
    expect(authorized('Bearer anything', undefined)).toBe(true);
  });

  it('answers only a bearer of the key when it has one', () => {
    const key = 'k'.repeat(32);
    expect(authorized(`Bearer ${key}`, key)).toBe(true);
    expect(authorized(`bearer ${key}`, key)).toBe(true);
    expect(authorized(undefined, key)).toBe(false);
    expect(authorized('Bearer local', key)).toBe(false);
    expect(authorized(`Bearer ${key}x`, key)).toBe(false);
    expect(authorized(key, key)).toBe(false);
  });
});

describe('the sequence a request takes', () => {
  const SYSTEM = '[{"system":"You are an agent"}';
  const warmUp = `${SYSTEM},{"user":"New task: "}]`;
  const taskA = `${SYSTEM},{"user":"New task: read the price"}]`;
  const taskAStep2 = `${SYSTEM},{"user":"New task: read the price"},{"observation":"..."}]`;
  const slot = (key: string | null, more: Partial<SlotState> = {}): SlotState => ({ busy: false, key, lastUsed: 0, ...more });

  it('takes the free sequence that holds the longest start of its prompt', () => {
    const slots = [slot(warmUp, { lastUsed: 1 }), slot(taskA, { lastUsed: 2 })];
    expect(chooseSlot(slots, taskAStep2, SYSTEM.length)).toBe(slots[1]);
  });

  it('takes the one unused longest when none holds more than the system prompt', () => {
    const slots = [slot('[{"system":"Another agent"},{"user":"Hi"}]', { lastUsed: 5 }), slot(null, { lastUsed: 0 }), slot(null, { lastUsed: 3 })];
    expect(chooseSlot(slots, taskA, SYSTEM.length)).toBe(slots[1]);
  });

  it('waits for a sequence still priming its prompt start rather than evaluating it again on a cold one', () => {
    const slots = [slot(warmUp, { busy: true, priming: true }), slot(null)];
    expect(chooseSlot(slots, taskA, SYSTEM.length)).toBeUndefined();
    // Primed and free: taken.
    slots[0].busy = false;
    slots[0].priming = false;
    expect(chooseSlot(slots, taskA, SYSTEM.length)).toBe(slots[0]);
  });

  it('does not wait for a busy conversation: another starts on a free sequence', () => {
    const slots = [slot(taskA, { busy: true }), slot(null)];
    expect(chooseSlot(slots, `${SYSTEM},{"user":"New task: read the status"}]`, SYSTEM.length)).toBe(slots[1]);
  });

  it('prefers a free sequence to a priming one that holds as much of its prompt', () => {
    const slots = [slot(warmUp, { busy: true, priming: true }), slot(warmUp)];
    expect(chooseSlot(slots, taskA, SYSTEM.length)).toBe(slots[1]);
  });

  it('waits when every sequence is busy', () => {
    expect(chooseSlot([slot(taskA, { busy: true })], taskAStep2, SYSTEM.length)).toBeUndefined();
  });
});
