import { HUMAN_TYPE_MAX_CHARS, HUMAN_TYPE_MAX_MS, humanTypingDelays, interactionMessageSchema } from './message.schema';
import { parseRequest } from './validation';
import { errorOf } from '../../../test/support/errors';

const type = (text: string, humanLike: boolean) => parseRequest(interactionMessageSchema, { actionType: 'interaction', action: { type: 'TYPE', text, humanLike } }, 'message.');

describe('TYPE interactions', () => {
  it('type up to 2,000 characters human-like, and up to 10,000 at once', () => {
    expect(type('é'.repeat(HUMAN_TYPE_MAX_CHARS), true).action).toMatchObject({ type: 'TYPE', humanLike: true });
    expect(type('x'.repeat(10_000), false).action).toMatchObject({ type: 'TYPE', humanLike: false });
  });

  it('take humanLike null as its default (false)', () => {
    expect(parseRequest(interactionMessageSchema, { actionType: 'interaction', action: { type: 'TYPE', text: 'hi', humanLike: null } }, 'message.').action).toEqual({ type: 'TYPE', text: 'hi', humanLike: false });
  });

  it('refuse longer human-like text with 400 INVALID_PARAMETER, without echoing it', () => {
    const e = errorOf(() => type('secret-'.repeat(300), true));
    expect({ status: e.status, code: e.code, message: e.message, details: e.details }).toEqual({
      status: 400,
      code: 'INVALID_PARAMETER',
      message: 'message.action.text: human-like typing takes at most 2000 characters (got 2100); send longer text without humanLike',
      details: { parameter: 'message.action.text', value: null },
    });
    expect(errorOf(() => type('x'.repeat(10_001), false))).toMatchObject({ status: 400, code: 'INVALID_PARAMETER', details: { parameter: 'message.action.text' } });
  });
});

describe('human-like typing pauses', () => {
  it('are 40-150 ms per key for short text', () => {
    const delays = humanTypingDelays(20, () => 0.5);
    expect(delays).toEqual(Array(20).fill(95));
    expect(Math.min(...humanTypingDelays(200))).toBeGreaterThanOrEqual(40);
    expect(Math.max(...humanTypingDelays(200))).toBeLessThanOrEqual(150);
  });

  it('add up to at most 30 s for the longest text', () => {
    const delays = humanTypingDelays(HUMAN_TYPE_MAX_CHARS, () => 1);
    expect(delays.reduce((a, b) => a + b, 0)).toBeCloseTo(HUMAN_TYPE_MAX_MS, 6);
    expect(HUMAN_TYPE_MAX_MS).toBe(30_000);
  });
});
