import { extremeOpenedNote, priceExtreme, priceExtremeAsked, priceExtremeNote, searchFirstNote } from './price-extreme';

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

  it('reads only the lines of the title the task names, when the page lists others that begin with it', () => {
    const results = [
      'URL: http://books.test/search.html?q=Dune',
      'Title: Search results – Bookbarn',
      'Visible text:',
      'Dune – Frank Herbert (Folio Society, hardback) · condition: Fine · €58.00',
      'Dune – Frank Herbert (New English Library, paperback) · condition: Acceptable · €4.75',
      'Dune Messiah – Frank Herbert (Ace, paperback) · condition: Good · €3.90',
    ].join('\n');
    expect(priceExtremeNote('Find the cheapest copy of Dune on Bookbarn and tell me which shop sells it.', results)).toBe(
      'Note: of the 2 prices of "Dune" (other titles left out) on this page, the lowest is on the line "Dune – Frank Herbert (New English Library, paperback) · condition: Acceptable · €4.75" (the task asks for the cheapest).',
    );
    // one line of the title, the others another title: still said
    expect(priceExtremeNote('Find the cheapest copy of Dune.', results.split('\n').filter((line) => !line.includes('Folio')).join('\n'))).toMatch(/^Note: of the 1 price of "Dune" .* "Dune – Frank Herbert \(New English Library/);
  });

  it('reads element lines, amounts with the currency after them, thousands and cents', () => {
    const cards = [
      'Interactive elements:',
      '[2] link "Graslei House"',
      '[3] link "See availability"',
      '[4] link "Patershol Rooms"',
      '[5] link "See availability"',
      'Visible text:',
      'Guesthouse · Graslei · 8.9 Excellent',
      '€96 a night · See availability',
      'Guesthouse · Patershol · 7.9 Good',
      '€71 a night · See availability',
    ].join('\n');
    expect(priceExtremeNote('Find the cheapest place to stay in Ghent.', cards)).toBe(
      'Note: of the 2 prices on this page, the lowest is on the line "€71 a night · See availability" (the task asks for the cheapest). Press [5] link "See availability" to open it.',
    );
    // as many such links as priced lines, or the line's own: told; otherwise not
    expect(priceExtremeNote('Find the cheapest place to stay in Ghent.', cards.replace('[5] link "See availability"', '[5] link "Book now"'))).not.toContain('Press [');
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

describe('a page to search first', () => {
  const home = [
    'URL: http://books.test/index.html',
    'Title: Bookbarn – second-hand books from independent sellers',
    'Interactive elements:',
    '[1] textbox "Title, author or ISBN" type=search empty',
    '[2] button "Find books"',
    '[3] link "Dune – Frank Herbert (Folio Society)"',
    'Visible text:',
    'Bookbarn',
    'Staff picks',
    '(this is the whole page)',
  ].join('\n');
  const task = 'Find the cheapest copy of Dune on Bookbarn and tell me which shop sells it.';

  it('says to search for the name the task compares, with the field and its button', () => {
    expect(searchFirstNote(task, home)).toBe('Note: the task asks for the cheapest "Dune": a link here names one of them; to compare them all, type "Dune" into [1] "Title, author or ISBN", then press [2] "Find books".');
    expect(searchFirstNote('Find the most expensive copy of Emma.', home.replace('[2] button "Find books"', '[2] link "Help"'))).toBe('Note: the task asks for the most expensive "Emma"; to compare them all, type "Emma" into [1] "Title, author or ISBN", then press Enter.');
  });

  it('says nothing once the field holds text, where the page shows prices, without a search field, or for a task that compares nothing', () => {
    expect(searchFirstNote(task, home.replace('type=search empty', 'type=search value="Dune"'))).toBeUndefined();
    expect(searchFirstNote(task, home.replace('Staff picks', 'Dune €12.00\nDune €9.50'))).toBeUndefined();
    expect(searchFirstNote(task, home.replace('[1] textbox "Title, author or ISBN" type=search empty', '[1] textbox "Your name" empty'))).toBeUndefined();
    expect(searchFirstNote('Tell me which shop sells Dune on Bookbarn.', home)).toBeUndefined();
  });
});

describe('the page opened from the line named the cheapest', () => {
  const results = ['URL: http://books.test/search?q=Dune', 'Visible text:', 'Dune – Folio Society · €58.00', 'Dune – New English Library · €4.75'].join('\n');
  const book = (price: string) => ['URL: http://books.test/book?id=nel', 'Interactive elements:', '[1] link "Back to results"', 'Visible text:', 'Dune', `New English Library, paperback · ${price}`, 'Sold by', 'Paperback Rider, Hull'].join('\n');

  it('names the amount of the line the note gave', () => {
    expect(priceExtreme('Find the cheapest copy of Dune.', results)?.named).toEqual({ amount: '€4.75', end: 'lowest' });
    expect(priceExtreme('Find the most expensive copy of Dune.', results)?.named).toEqual({ amount: '€58.00', end: 'highest' });
  });

  it('is said to be that line\'s page when it shows the amount, and not otherwise', () => {
    expect(extremeOpenedNote({ amount: '€4.75', end: 'lowest' }, book('€4.75'))).toBe(
      "Note: this page shows €4.75, the lowest price of the page before: it is the cheapest one's own page. If the task asks what this page shows, call done with it.",
    );
    expect(extremeOpenedNote({ amount: '€4.75', end: 'lowest' }, book('€58.00'))).toBeUndefined();
    expect(extremeOpenedNote({ amount: '€4.75', end: 'lowest' }, book('€14.75'))).toBeUndefined();
  });
});
