import { afterCursor, decodeCursor, encodeCursor, parseLimit } from './cursor';

describe('run history cursors', () => {
  it('round-trips the sort key of the last item', () => {
    const key = { createdAt: new Date('2026-11-23T10:00:00.123Z'), id: 'run_abc' };
    const cursor = encodeCursor(key);
    expect(cursor).toBe('1795428000123.run_abc');
    expect(decodeCursor(cursor)).toEqual(key);
  });

  it.each(['not a cursor!', '1.', '.run_a', '1.5.x', '-1.run_a', '1234567890123456.run_a', `1.${'x'.repeat(129)}`, 'WzEsIngiXQ'])(
    'refuses %j with INVALID_PARAMETER',
    (cursor) => {
      expect(() => decodeCursor(cursor)).toThrow(expect.objectContaining({ code: 'INVALID_PARAMETER', status: 400, details: { parameter: 'cursor', value: cursor } }));
    },
  );

  it('selects what comes after the key in (createdAt desc, _id desc) order', () => {
    const createdAt = new Date(1000);
    expect(afterCursor({ createdAt, id: 'run_b' })).toEqual({ $or: [{ createdAt: { $lt: createdAt } }, { createdAt, _id: { $lt: 'run_b' } }] });
  });
});

describe('limit', () => {
  it('defaults to 20 and takes 1..100', () => {
    expect(parseLimit(undefined)).toBe(20);
    expect(parseLimit('')).toBe(20);
    expect(parseLimit('1')).toBe(1);
    expect(parseLimit('100')).toBe(100);
  });

  it.each(['0', '101', '2.5', 'ten', '-3'])('refuses %s with both bounds', (raw) => {
    expect(() => parseLimit(raw)).toThrow(expect.objectContaining({ code: 'INVALID_PARAMETER', details: { parameter: 'limit', value: raw, min: 1, max: 100 } }));
  });
});
