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

describe('an amount seen on the line of another item', () => {
  const list = ['Invoices', ...Array.from({ length: 20 }, (_, i) => `Invoice #${1001 + i}: €${(300 + i * 37.13).toFixed(2)}`)].join('\n');

  it('is the answer amount seen only on lines of other items than the one the answer names, with its line', () => {
    const figures = new SeenFigures();
    figures.saw('What is the amount of invoice #1025?');
    figures.saw(list);
    expect(figures.misplaced('The amount of invoice #1025 is €337.13.')).toEqual({ amount: '337.13', item: '#1025', line: 'Invoice #1002: €337.13' });
  });

  it('is nothing when the amount was on a line of the item named, on a line that names no item, or the answer names no item', () => {
    const figures = new SeenFigures();
    figures.saw(list);
    expect(figures.misplaced('Invoice #1002 is €337.13')).toBeUndefined();
    expect(figures.misplaced('The amount is €337.13')).toBeUndefined();
    figures.saw('Total due: €337.13');
    expect(figures.misplaced('The amount of invoice #1025 is €337.13.')).toBeUndefined();
  });
});
