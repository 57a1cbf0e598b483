import { authorized } from './model-server';

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
