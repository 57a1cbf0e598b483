import { allowCall, MIN_CALL_OUTPUT_TOKENS, PROMPT_ESTIMATE_MARGIN, tighterBudget } from './cost-budget';

describe('dollar budgets', () => {
  const price = { input: 1, output: 2 }; // USD per million tokens

  it('refuses a call whose prompt (with its margin) and fewest output tokens would pass what is left', () => {
    const promptTokens = 1000;
    const cost = (promptTokens * PROMPT_ESTIMATE_MARGIN * 1 + MIN_CALL_OUTPUT_TOKENS * 2) / 1e6;
    expect(allowCall(cost - 0.000001, price, promptTokens, 4096)).toEqual({ ok: false, estimatedCost: Math.round(cost * 1e6) / 1e6 });
    expect(allowCall(cost, price, promptTokens, 4096).ok).toBe(true);
  });

  it('caps the output tokens at what the budget leaves after the prompt', () => {
    const promptCost = (1000 * PROMPT_ESTIMATE_MARGIN) / 1e6;
    // 100 output tokens cost 0.0002 USD
    expect(allowCall(promptCost + 0.0002, price, 1000, 4096)).toEqual({ ok: true, maxTokens: 100 });
    expect(allowCall(1, price, 1000, 4096)).toEqual({ ok: true, maxTokens: 4096 });
  });

  it('lets every call through when the model has no price (nothing is charged)', () => {
    expect(allowCall(0, undefined, 1_000_000, 4096)).toEqual({ ok: true, maxTokens: 4096 });
    expect(allowCall(0, { input: 0, output: 0 }, 1_000_000, 4096)).toEqual({ ok: true, maxTokens: 4096 });
  });

  it('holds a step to the tighter of maxCost and the daily limit (less what the task has spent and not yet been charged)', () => {
    expect(tighterBudget(undefined, undefined, 0)).toBeUndefined();
    expect(tighterBudget({ maxCost: 1, left: 0.4 }, undefined, 0.6)).toEqual({ kind: 'maxCost', limit: 1, left: 0.4 });
    expect(tighterBudget(undefined, { limit: 5, left: 2 }, 0.5)).toEqual({ kind: 'dailyLimit', limit: 5, left: 1.5 });
    expect(tighterBudget({ maxCost: 1, left: 0.4 }, { limit: 5, left: 0.7 }, 0.6)).toEqual({ kind: 'dailyLimit', limit: 5, left: 0.1 });
    expect(tighterBudget({ maxCost: 1, left: 0.4 }, { limit: 5, left: 2 }, 0.6)).toEqual({ kind: 'maxCost', limit: 1, left: 0.4 });
  });

  it('holds a step to the balance too, less what the task has spent and not yet been charged', () => {
    expect(tighterBudget(undefined, undefined, 0.1, 0.3)).toEqual({ kind: 'balance', limit: 0.3, left: 0.2 });
    expect(tighterBudget({ maxCost: 1, left: 0.4 }, { limit: 5, left: 2 }, 0, 0.3)).toEqual({ kind: 'balance', limit: 0.3, left: 0.3 });
    expect(tighterBudget({ maxCost: 1, left: 0.1 }, { limit: 5, left: 2 }, 0, 0.3)).toEqual({ kind: 'maxCost', limit: 1, left: 0.1 });
  });
});
