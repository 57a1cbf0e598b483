/** USD per million tokens. */
export interface TokenPrice {
  input: number;
  output: number;
}

export type PriceTable = Record<string, TokenPrice>;

/**
 * Price of one model: the exact key, else the longest key the model name starts with
 * (so 'gpt-4o' covers dated variants; a trailing '*' on a key is allowed), else '*'.
 */
export function priceOf(model: string, prices: PriceTable): TokenPrice | undefined {
  if (Object.hasOwn(prices, model)) return prices[model];
  let best: string | undefined;
  let bestLength = 0;
  for (const key of Object.keys(prices)) {
    const prefix = key.endsWith('*') ? key.slice(0, -1) : key;
    if (prefix.length > bestLength && model.startsWith(prefix)) {
      best = key;
      bestLength = prefix.length;
    }
  }
  if (best !== undefined) return prices[best];
  return Object.hasOwn(prices, '*') ? prices['*'] : undefined;
}

/** Cost in USD, rounded to 6 decimals (a millionth of a dollar is the smallest unit billed). */
export function computeCost(usage: { inputTokens: number; outputTokens: number }, model: string, prices: PriceTable): number {
  const price = priceOf(model, prices);
  if (!price) return 0;
  const tokens = (count: number) => (Number.isFinite(count) && count > 0 ? count : 0);
  const cost = (tokens(usage.inputTokens) * price.input + tokens(usage.outputTokens) * price.output) / 1_000_000;
  return Math.round((cost + Number.EPSILON) * 1_000_000) / 1_000_000;
}
