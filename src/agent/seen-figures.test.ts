import { amountsOf, SeenFigures } from './seen-figures';

describe('amountsOf', () => {
  it('takes numbers with a currency beside them or two decimals, not counts or years', () => {
    expect(amountsOf('The Oak Rocking Chair costs $149.')).toEqual(['149']);
    expect(amountsOf('Invoice #1025: €374.26, due 2026')).toEqual(['374.26']);
    expect(amountsOf('3 items, 12 EUR in total, 4.50 each')).toEqual(['12', '4.50']);
    expect(amountsOf('There are 3 people in 2 cities.')).toEqual([]);
  });
});

describe('SeenFigures', () => {
  it('finds the amounts of an answer no text seen held, by their digits', () => {
    const seen = new SeenFigures();
    seen.saw('Pine Chair: $89\nOak Rocking Chair: $149\nTotal 1,234.50');
    expect(seen.unseen('$149')).toEqual([]);
    expect(seen.unseen('149.00 USD')).toEqual([]);
    expect(seen.unseen('$1234.50')).toEqual([]);
    expect(seen.unseen('The price is $129.99')).toEqual(['129.99']);
    seen.reset();
    expect(seen.unseen('$149')).toEqual(['149']);
  });
});
