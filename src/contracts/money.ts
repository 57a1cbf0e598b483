/** Amounts in USD are kept to 6 decimals: a millionth of a dollar is the smallest unit billed. */
export function roundUsd(n: number): number {
  return Math.round((n + Number.EPSILON) * 1_000_000) / 1_000_000;
}
