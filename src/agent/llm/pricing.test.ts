import { computeCost, priceOf } from './pricing';

const PRICES = {
  'gpt-4o': { input: 2.5, output: 10 },
  'gpt-4o-mini': { input: 0.15, output: 0.6 },
  'claude-*': { input: 3, output: 15 },
  '*': { input: 1, output: 2 },
};

describe('computeCost', () => {
  it('uses the exact model key', () => {
    expect(computeCost({ inputTokens: 1_000_000, outputTokens: 1_000_000 }, 'gpt-4o', PRICES)).toBe(12.5);
    expect(computeCost({ inputTokens: 1000, outputTokens: 500 }, 'gpt-4o-mini', PRICES)).toBe(0.00045);
  });

  it('falls back to the longest prefix key, then to "*"', () => {
    expect(priceOf('gpt-4o-mini-2024-07-18', PRICES)).toBe(PRICES['gpt-4o-mini']);
    expect(priceOf('gpt-4o-2024-08-06', PRICES)).toBe(PRICES['gpt-4o']);
    expect(priceOf('claude-sonnet-4-5', PRICES)).toBe(PRICES['claude-*']);
    expect(computeCost({ inputTokens: 500_000, outputTokens: 250_000 }, 'llama3.1', PRICES)).toBe(1);
  });

  it('is 0 without a matching price', () => {
    expect(computeCost({ inputTokens: 1000, outputTokens: 1000 }, 'llama3.1', { 'gpt-4o': { input: 1, output: 1 } })).toBe(0);
    expect(computeCost({ inputTokens: 1000, outputTokens: 1000 }, 'x', {})).toBe(0);
  });

  it('rounds to 6 decimals and ignores nonsense token counts', () => {
    expect(computeCost({ inputTokens: 1, outputTokens: 1 }, 'gpt-4o-mini', PRICES)).toBe(0.000001);
    expect(computeCost({ inputTokens: 3, outputTokens: 0 }, 'scripted-model', { 'scripted-model': { input: 1, output: 2 } })).toBe(0.000003);
    expect(computeCost({ inputTokens: 1234, outputTokens: 56 }, 'scripted-model', { 'scripted-model': { input: 1, output: 2 } })).toBe(0.001346);
    expect(computeCost({ inputTokens: -5, outputTokens: Number.NaN }, 'gpt-4o', PRICES)).toBe(0);
  });
});
