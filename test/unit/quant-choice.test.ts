/** scripts/quant-choice.js: which weights a step takes the least time with, from measures of each. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { chooseQuant, stepMs } = require('../../scripts/quant-choice.js') as {
  chooseQuant: (measures: Record<string, unknown>, fallback: string) => { quant: string; estimates: Record<string, number> };
  stepMs: (m: { batchTokens: number; batchMs: number; tokenMs: number }) => number;
};

describe('the weights a step is fastest with', () => {
  it('estimates a step as 300 prompt tokens at the batch rate and 75 generated at the single-token rate', () => {
    expect(stepMs({ batchTokens: 128, batchMs: 1280, tokenMs: 60 })).toBe(300 * 10 + 75 * 60);
  });

  it('takes the faster prompt where generation is close (a CPU whose Q4_1 batches are slow)', () => {
    const choice = chooseQuant({ q4_k_m: { batchTokens: 128, batchMs: 1910, tokenMs: 57 }, q4_1: { batchTokens: 128, batchMs: 5120, tokenMs: 68 } }, 'q4_1');
    expect(choice).toEqual({ quant: 'q4_k_m', estimates: { q4_k_m: 8752, q4_1: 17100 } });
  });

  it('takes the faster generation where prompts are close', () => {
    expect(chooseQuant({ q4_k_m: { batchTokens: 128, batchMs: 950, tokenMs: 76 }, q4_1: { batchTokens: 128, batchMs: 1000, tokenMs: 61 } }, 'q4_k_m').quant).toBe('q4_1');
  });

  it('leaves out a measure that failed, and falls back when none is usable', () => {
    expect(chooseQuant({ q4_k_m: { batchTokens: 128, batchMs: 0, tokenMs: 57 }, q4_1: { batchTokens: 128, batchMs: 5120, tokenMs: 68 } }, 'q4_k_m').quant).toBe('q4_1');
    expect(chooseQuant({ q4_k_m: undefined }, 'q4_1')).toEqual({ quant: 'q4_1', estimates: {} });
  });
});
