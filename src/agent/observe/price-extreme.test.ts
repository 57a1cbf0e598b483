import { priceExtremeAsked, priceExtremeNote } from './price-extreme';

const page = [
  'URL: http://shop.test/list.html?cat=garden',
  'Title: Garden category',
  'Interactive elements:',
  '[1] link "All categories"',
  'Visible text:',
  'Garden category',
  'Garden Hose: $19',
  'Rake: $15',
  'Trowel: $7',
  'Watering Can: $12',
  '(this is the whole page)',
].join('\n');

describe('the cheapest or most expensive line of the page', () => {
  it('is asked by the words of the task', () => {
    expect(priceExtremeAsked('Which product in the Garden category is the cheapest?')).toBe('lowest');
    expect(priceExtremeAsked('Open the lowest-priced hotel and read its phone number')).toBe('lowest');
    expect(priceExtremeAsked('Book the most expensive room')).toBe('highest');
    expect(priceExtremeAsked('What is the price of the Blue Kettle?')).toBeUndefined();
    expect(priceExtremeAsked('Find the highest rated review')).toBeUndefined();
  });

  it('names the line of the lowest or highest price', () => {
    expect(priceExtremeNote('Which product in the Garden category is the cheapest?', page)).toBe('Note: of the 4 prices on this page, the lowest is on the line "Trowel: $7" (the task asks for the cheapest).');
    expect(priceExtremeNote('the most expensive one', page)).toBe('Note: of the 4 prices on this page, the highest is on the line "Garden Hose: $19" (the task asks for the most expensive).');
  });

  it('reads element lines, amounts with the currency after them, thousands and cents', () => {
    const hotels = ['Interactive elements:', '[3] link "Hotel Alba – 1,240.50 €"', '[4] link "Pine Lodge – 980 €"', '[5] link "Sea View – 1,005.00 €"'].join('\n');
    expect(priceExtremeNote('open the cheapest hotel', hotels)).toBe('Note: of the 3 prices on this page, the lowest is on the line "[4] link "Pine Lodge – 980 €"" (the task asks for the cheapest).');
  });

  it('says nothing without two prices, or for a task that asks for no extreme; a line of two prices is not read', () => {
    expect(priceExtremeNote('the cheapest', 'Visible text:\nTrowel: $7\n(this is the whole page)')).toBeUndefined();
    expect(priceExtremeNote('the cheapest', 'Visible text:\nA: $7\nB: $7')).toBeUndefined();
    expect(priceExtremeNote('the price of the Rake', page)).toBeUndefined();
    expect(priceExtremeNote('the cheapest', 'Visible text:\nKettle: was $20, now $15\nMug: $9\nCup: $4')).toBe('Note: of the 2 prices on this page, the lowest is on the line "Cup: $4" (the task asks for the cheapest).');
  });
});
