/**
 * The last taken place of a sequence whose places are taken from `first` on without gaps
 * (`first - 1` when none is), asking `taken` about single places: one question for an empty
 * sequence, about 2·log2(n) for n places (doubling, then halving). Each question is meant
 * to be a lookup by `_id`, the only filter the embedded FerretDB answers without reading
 * the whole collection.
 */
export async function lastTakenPlace(taken: (place: number) => Promise<boolean>, first: number): Promise<number> {
  if (!(await taken(first))) return first - 1;
  let low = first; // taken
  let high = first + 1;
  while (await taken(high)) {
    low = high;
    high = first + 2 * (high - first);
  }
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    if (await taken(mid)) low = mid;
    else high = mid;
  }
  return low;
}
