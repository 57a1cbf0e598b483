import { lastTakenPlace } from './id-probe';

describe('the last taken place of a gapless sequence', () => {
  const probe = (first: number, count: number) => {
    const asked: number[] = [];
    const taken = async (place: number) => {
      asked.push(place);
      return place >= first && place < first + count;
    };
    return { asked, result: lastTakenPlace(taken, first) };
  };

  it('is found for every length, starting at 0 or at 1', async () => {
    for (const first of [0, 1]) {
      for (let count = 0; count <= 70; count++) await expect(probe(first, count).result).resolves.toBe(first + count - 1);
    }
  });

  it('asks once for an empty sequence and about 2·log2(n) times for a long one', async () => {
    const empty = probe(1, 0);
    await empty.result;
    expect(empty.asked).toEqual([1]);
    const long = probe(0, 1000);
    await expect(long.result).resolves.toBe(999);
    expect(long.asked.length).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(1000)) + 2);
  });
});
