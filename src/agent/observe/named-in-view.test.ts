import { keywordsAsked, namedInExtractNote, namedInViewNote, namesAsked, recordOf } from './named-in-view';

const page = (...text: string[]) => ['URL: http://shop.test/results?q=chair&page=2', 'Title: Search results', 'Tabs: [0] Search results (active)', 'Interactive elements:', '[1] link "Previous page"', 'Visible text:', ...text, '(this is the whole page)'].join('\n');
const task = 'Search the catalogue for "chair" and tell me the price of the Oak Rocking Chair. The results have several pages. Answer with the price only.';

describe('what a task asks about, in view', () => {
  it('takes the names of a task that asks for information: several capitalised words, quoted names, identifiers', () => {
    expect(namesAsked(task)).toEqual(['Oak Rocking Chair']);
    expect(namesAsked('What is the status of order A-1042 at Bank of Lyon?')).toEqual(['Bank of Lyon', 'A-1042']);
    expect(namesAsked('Tell me what the "Gold plan" costs per month.')).toEqual(['Gold plan']);
    expect(namesAsked('What is the amount of invoice #1025?')).toEqual(['#1025']);
    expect(namesAsked('Which Open Water Swim session starts first?')).toEqual(['Which Open Water Swim', 'Open Water Swim']);
    // a task that only does something, a searched or typed text, a plain word: no names
    expect(namesAsked('Add the Oak Rocking Chair to the cart.')).toEqual([]);
    expect(namesAsked('Type "Grace Hopper" into the name field and tell me what the page says.')).toEqual([]);
    expect(namesAsked('Tell me the price of a "chair".')).toEqual([]);
  });

  it('quotes the lines of the page text that name them, a name alone with the line after it', () => {
    expect(namedInViewNote(task, page('5 results for "chair", page 2 of 2', 'Oak Rocking Chair: $149', 'Garden Chair: $35'))).toBe(
      'Note: the task asks about "Oak Rocking Chair"; this page shows "Oak Rocking Chair: $149". If that answers the task, call done with it.',
    );
    expect(namedInViewNote(task, page('Oak Rocking Chair', '$149', 'Garden Chair', '$35'))).toBe(
      'Note: the task asks about "Oak Rocking Chair"; this page shows "Oak Rocking Chair" then "$149". If that answers the task, call done with it.',
    );
  });

  it('says nothing when the page does not name it, names it only in an element or the address, or the task asks nothing', () => {
    // a heading then its paragraph (the site's name named apart from its title: its words are not looked for)
    expect(namedInViewNote('How much is a large sourdough at Crumb & Co?', page('Crumb & Co', 'Baked every morning from 5 a.m. in our shop on Mill Lane. Order before 11:00.', 'Sourdough €3.20 €5.40'))).toBeUndefined();
    expect(namedInViewNote(task, page('5 results for "chair", page 1 of 2', 'Office Chair: $89'))).toBeUndefined();
    expect(namedInViewNote(task, page('Results').replace('"Previous page"', '"Oak Rocking Chair"'))).toBeUndefined();
    expect(namedInViewNote(task, page('Oak Rocking Chair'))).toBeUndefined();
    expect(namedInViewNote('Add the Oak Rocking Chair to the cart.', page('Oak Rocking Chair: $149'))).toBeUndefined();
  });
});

describe('a rarer word of a question that names no name, in view', () => {
  const directory = (...rows: string[]) => page('Staff directory', 'Name Department Extension', ...rows);
  it('quotes the one or two lines that hold it', () => {
    expect(namedInViewNote("Who looks after payroll at Northwind, and what's their extension?", directory('Ines Duarte Finance 2604', 'Jonas Berg Payroll 2615'))).toBe(
      'Note: the task asks about "payroll"; this page shows "Name Department Extension" above "Jonas Berg Payroll 2615" (Name: Jonas Berg, Department: Payroll, Extension: 2615). If that answers the task, call done with it.',
    );
    expect(namedInViewNote("Who looks after payroll at Northwind?", page('Ines Duarte Finance 2604', 'Jonas Berg Payroll 2615'))).toBe(
      'Note: the task asks about "payroll"; this page shows "Jonas Berg Payroll 2615". If that answers the task, call done with it.',
    );
    expect(namedInViewNote('What time does the Riverside library open on Sundays?', page('Riverside Library', 'Saturday 10:00–17:00', 'Sunday 13:00–17:00'))).toBe(
      'Note: the task asks about "sunday"; this page shows "Riverside Library" above "Sunday 13:00–17:00". If that answers the task, call done with it.',
    );
  });

  it('says nothing for a word on more than two lines, a word alone on its line or on a line without a figure, common words, or a task that asks nothing', () => {
    expect(namedInViewNote('Which product in the Garden category is the cheapest?', page('Hardware store', 'Categories: Kitchen | Garden | Office', 'Bestseller: Pencil, $1'))).toBeUndefined();
    expect(namedInViewNote('Who looks after payroll?', directory('A Payroll 1', 'B Payroll 2', 'C Payroll 3'))).toBeUndefined();
    expect(namedInViewNote('Who looks after payroll?', directory('Payroll'))).toBeUndefined();
    expect(keywordsAsked('What is the cheapest price on this website?')).toEqual([]);
    expect(keywordsAsked('Turn off personalised ads.')).toEqual([]);
    expect(keywordsAsked('What time does the Riverside library open on Sundays?')).toEqual(['riverside', 'library', 'sunday']);
  });
});

describe('a row read by the heading row above it', () => {
  it('pairs each name with its cell, read from the right of the row, whose first cell may take several words', () => {
    expect(recordOf('Bread Small Large', 'Sourdough €3.20 €5.40')).toBe('Bread: Sourdough, Small: €3.20, Large: €5.40');
    expect(recordOf('Name Department Extension', 'Jonas Berg Payroll 2615')).toBe('Name: Jonas Berg, Department: Payroll, Extension: 2615');
  });

  it('is not read for a heading of fewer than three names or a row of fewer words', () => {
    expect(recordOf('Riverside Library', 'Sunday 13:00–17:00')).toBeUndefined();
    expect(recordOf('Bread Small Large', 'Sourdough €5.40')).toBeUndefined();
  });
});

describe('the site’s own words', () => {
  it('pick out no line, and a word of the question the page holds on a line with a figure is quoted instead', () => {
    const task = 'Until when is my Pulse Fitness membership valid? Log in with sam@example.com, password Peach-Tree-77.';
    const login = ['URL: http://gym.test/login.html', 'Title: Member login – Pulse Fitness', 'Interactive elements:', '[1] link "Pulse Fitness"', 'Visible text:', 'Pulse Fitness', 'Member login'].join('\n');
    expect(namedInViewNote(task, login)).toBeUndefined();
    const member = ['URL: http://gym.test/member.html', 'Title: My membership – Pulse Fitness', 'Visible text:', 'Hello Sam', 'Plan Year (€29.90 a month)', 'Valid until 14 April 2027'].join('\n');
    expect(namedInViewNote(task, member)).toBe('Note: the task asks about "valid"; this page shows "Valid until 14 April 2027". If that answers the task, call done with it.');
  });
});

describe('a task that names only the site it is on', () => {
  const bakery = (...text: string[]) => ['URL: http://bakery.test/index.html', 'Title: Crumb & Co – Bakery', 'Interactive elements:', '[1] link "Breads"', 'Visible text:', 'Crumb & Co', 'Baked every morning from 5 a.m. in our shop on Mill Lane.', ...text].join('\n');
  const task = 'How much is a large sourdough at Crumb & Co?';
  it('quotes the line of its other words, with the heading row above it that holds another of them', () => {
    expect(namedInViewNote(task, bakery('Bread Small Large', 'White farmhouse €2.60 €4.10', 'Sourdough €3.20 €5.40', 'Dark rye €3.00 €4.90'))).toBe(
      'Note: the task asks about "sourdough"; this page shows "Bread Small Large" above "Sourdough €3.20 €5.40" (Bread: Sourdough, Small: €3.20, Large: €5.40). If that answers the task, call done with it.',
    );
    // no heading row: the line alone; a heading below the line, or far above it, is not its heading
    expect(namedInViewNote(task, bakery('Large orders', ...Array.from({ length: 8 }, (_, i) => `Note ${i}`), 'Sourdough €3.20 €5.40'))).toBe('Note: the task asks about "sourdough"; this page shows "Sourdough €3.20 €5.40". If that answers the task, call done with it.');
    expect(namedInViewNote(task, bakery('Sourdough €3.20 €5.40', 'Large loaves on Saturdays'))).toBe('Note: the task asks about "sourdough"; this page shows "Sourdough €3.20 €5.40". If that answers the task, call done with it.');
  });

  it('says nothing where the page does not show its other words, or where a name is not the site’s', () => {
    expect(namedInViewNote(task, bakery('Cakes by the slice', 'Carrot cake – €3.40'))).toBeUndefined();
    expect(namedInViewNote('How much is a large sourdough at Mill Bakers?', bakery('Bread Small Large', 'Sourdough €3.20 €5.40'))).toBeUndefined();
  });
});

describe('a name of one capitalised word in a question of a figure', () => {
  const task = 'Open the price list (it opens in a new tab) and tell me the monthly price of the Gold plan. Answer with the price only.';
  const prices = ['URL: http://club.test/prices.html', 'Title: Price list', 'Interactive elements:', '(none in the viewport)', 'Visible text:', 'Price list', 'Silver plan: $19 per month', 'Gold plan: $42 per month'].join('\n');
  const plans = ['URL: http://club.test/index.html', 'Title: Membership plans', 'Interactive elements:', '[1] link "Open the price list"', 'Visible text:', 'Membership plans', 'Gold plan members save 24% on every order.'].join('\n');
  it('quotes the line that holds it with a figure of the kind asked', () => {
    expect(namedInViewNote(task, prices)).toBe('Note: the task asks about "Gold"; this page shows "Gold plan: $42 per month". If that answers the task, call done with it.');
  });

  it('says nothing for a line of another figure, a word that begins a sentence, the site’s name, or a question of no figure', () => {
    expect(namedInViewNote(task, plans)).toBeUndefined();
    expect(namedInViewNote('Gold plan: tell me its monthly price.', prices)).toBeUndefined();
    expect(namedInViewNote('Tell me the monthly price of the Gold plan.', prices.replace('Title: Price list', 'Title: Gold club prices'))).toBeUndefined();
    expect(namedInViewNote('Is the Gold plan right for me? Tell me yes or no.', prices)).toBeUndefined();
  });

  it('takes no function word for a name ("take The Hobbit back")', () => {
    const library = ['URL: http://library.test/index.html', 'Title: Eastfield Libraries', 'Interactive elements:', '[1] link "My account"', 'Visible text:', 'News', 'The Hillside branch is closed on 24 and 26 December.', 'New: The Hobbit (illustrated edition)'].join('\n');
    expect(namedInViewNote('When do I have to take The Hobbit back to Eastfield Libraries? My card number and PIN are in your secrets.', library)).toBeUndefined();
  });
});

describe('a question of a quantity about a name', () => {
  it('quotes a line with a figure besides the name, not the name with words only', () => {
    const product = (...text: string[]) => ['URL: http://shop.test/orca', 'Title: Soundhaus', 'Interactive elements:', '[1] tab "Specifications"', 'Visible text:', ...text].join('\n');
    const task = 'How long does the battery of the Orca S5 last on one charge?';
    expect(namedInViewNote(task, product('Orca S5 wireless headphones', 'Noise cancelling that adapts to where you are.'))).toBeUndefined();
    expect(namedInViewNote(task, product('Orca S5 wireless headphones', 'Orca S5 battery: up to 38 hours'))).toBe('Note: the task asks about "Orca S5"; this page shows "Orca S5 battery: up to 38 hours". If that answers the task, call done with it.');
  });
});

describe('the text an extract read', () => {
  it('has its line of what the task names quoted once, not the heading that repeats the query', () => {
    const extracted = [
      'Text of http://127.0.0.1:4000/h-infinite/index.html for "Invoice #1025: €":',
      '(Scrolled down to load more: 20 more items loaded.)',
      'Best match for "Invoice #1025: €":',
      'Invoice #1025: €512.40',
      'The whole text:',
      'Invoices',
      'Invoice #1024: €475.27',
      'Invoice #1025: €512.40',
    ].join('\n');
    expect(namedInExtractNote('What is the amount of invoice #1025?', extracted)).toBe(
      'Note: the task asks about "#1025"; the text your extract read shows "Invoice #1025: €512.40". If that answers the task, call done with it.',
    );
    expect(namedInExtractNote('What is the amount of invoice #1025?', extracted.replace(/#1025: €512.40/g, '#1026: €549.53'))).toBeUndefined();
  });

  it('has its best match with a figure quoted when no line names what the task asks about and the text holds its names', () => {
    const extracted = [
      'Text of http://127.0.0.1:4000/d-camera/index.html for "Battery weight":',
      'Best match for "Battery weight":',
      'Weight (with battery and card) | 468 g',
      'The whole text:',
      'Northlight › Cameras › Fennec X2',
      'Fennec X2',
      'The Fennec X2 pairs a 26-megapixel sensor with five-axis stabilisation.',
      'Battery | NP-F220, 2,200 mAh',
      'Weight (body only) | 412 g',
      'Weight (with battery and card) | 468 g',
      'NP-F220 battery (1)',
    ].join('\n');
    const task = 'How much does it weigh with the battery in?';
    expect(namedInExtractNote(task, extracted)).toBe(`Note: your extract's best match is "Weight (with battery and card) | 468 g". If that answers the task, call done with it.`);
    // the line of the most words of the question ("how heavy": weight), quoted first
    expect(namedInExtractNote('How heavy is the Fennec X2 once the battery is in?', extracted)).toBe(
      'Note: the task asks about "battery" and "weight"; the text your extract read shows "Weight (with battery and card) | 468 g". If that answers the task, call done with it.',
    );
    // a name the text does not hold, a best match without a figure, a task that asks nothing
    expect(namedInExtractNote('What does the Fennec X3 weigh once the battery is in?', extracted)).toBeUndefined();
    expect(namedInExtractNote(task, extracted.replace('Weight (with battery and card) | 468 g\nThe', 'Weight with the battery\nThe'))).toBeUndefined();
    expect(namedInExtractNote('Add the Fennec X2 to the basket.', extracted)).toBeUndefined();
  });
});

describe('a line of another day of the week than the task names', () => {
  it('is not quoted for the task\'s words', () => {
    const library = page('Riverside Library', 'Knit and natter, Thursdays 14:00 (Riverside)');
    expect(namedInViewNote('What time does the Riverside library open on Sundays?', library)).toBeUndefined();
    expect(namedInViewNote('What time does the Riverside library open on Sundays?', page('Riverside Library', 'Sundays 13:00–17:00 (Riverside)'))).toContain('"Sundays 13:00–17:00 (Riverside)"');
  });
});

describe('a table row the task asks about', () => {
  const loans = [
    'URL: http://library.test/loans.html',
    'Title: My loans – Eastfield Libraries',
    'Interactive elements:',
    '[3] button "Renew"',
    'Visible text:',
    'My loans',
    'Title | Borrowed | Due back',
    'Piranesi | 2 November 2026 | 30 November 2026 | Renew',
    'The Hobbit (illustrated edition) | 16 November 2026 | 14 December 2026 | Renew',
  ].join('\n');

  it('is read by its heading row, cell by cell', () => {
    expect(namedInViewNote('When do I have to take The Hobbit back to Eastfield Libraries?', loans)).toBe(
      'Note: the task asks about "hobbit"; this page shows "The Hobbit (illustrated edition) | 16 November 2026 | 14 December 2026 | Renew" (Title: The Hobbit (illustrated edition), Borrowed: 16 November 2026, Due back: 14 December 2026). If that answers the task, call done with it.',
    );
    expect(recordOf('Spec | Value', 'Weight | 468 g')).toBe('Spec: Weight, Value: 468 g');
  });

  it('is not quoted without a figure of the kind the question asks (a date for "when")', () => {
    const news = ['URL: http://library.test/', 'Title: Eastfield Libraries', 'Interactive elements:', '[2] link "My account"', 'Visible text:', 'New this month: "The Hobbit" illustrated edition, and 40 new graphic novels.'].join('\n');
    expect(namedInViewNote('When do I have to take The Hobbit back to Eastfield Libraries?', news)).toBeUndefined();
    expect(namedInViewNote('Is The Hobbit new at Eastfield Libraries? Tell me what the news say.', news)).toContain('this page shows "New this month');
  });

  it('without a heading row, or a heading of other cells, is quoted alone', () => {
    const bare = loans.replace('Title | Borrowed | Due back\n', '');
    expect(namedInViewNote('When do I have to take The Hobbit back to Eastfield Libraries?', bare)).toBe(
      'Note: the task asks about "hobbit"; this page shows "The Hobbit (illustrated edition) | 16 November 2026 | 14 December 2026 | Renew". If that answers the task, call done with it.',
    );
    expect(recordOf('Spec | Value', 'Weight')).toBeUndefined();
  });
});

describe('the line of the most words of a question', () => {
  it('is quoted alone when it holds more of them than any other (a measure asked by its page word)', () => {
    const camera = page('Fennec X2', 'Battery | NP-F220, 2,200 mAh', 'Weight (body only) | 412 g', 'Weight (with battery and card) | 468 g', 'NP-F220 battery (1)');
    expect(namedInViewNote('How heavy is it once the battery is in?', camera)).toBe(
      'Note: the task asks about "battery" and "weight"; this page shows "Weight (with battery and card) | 468 g". If that answers the task, call done with it.',
    );
    // one word of the question on each line: both lines of it
    expect(namedInViewNote('How heavy is it?', camera)).toBe(
      'Note: the task asks about "weight"; this page shows "Weight (body only) | 412 g", and "Weight (with battery and card) | 468 g". If that answers the task, call done with it.',
    );
  });
});

describe('a question of checking in', () => {
  it("takes the page's Check-in for its word, not the common word check", () => {
    expect(keywordsAsked('From what time can I check in there?')).toContain('check-in');
    const stay = page('Patershol Rooms', 'House rules', 'Check-in | from 16:30', 'Check-out | until 10:30', 'Pets | Not allowed');
    expect(namedInViewNote('Find the cheapest place to stay in Ghent on Staybird. From what time can I check in there?', stay.replace('Title: Search results', 'Title: Patershol Rooms – Staybird'))).toBe(
      'Note: the task asks about "check-in"; this page shows "Check-in | from 16:30". If that answers the task, call done with it.',
    );
  });
});

describe('a byline of the person the task names', () => {
  it('is quoted with the line above it, what they wrote', () => {
    const reviews = page('Great steaks', '★★★★☆ 4 out of 5 · by Zoe L.', 'Handle gets far too hot', '★★☆☆☆ 2 out of 5 · by Helga K.', 'Reviewed in November 2026 · Verified purchase');
    expect(namedInViewNote('A reviewer called Helga K. was unhappy with the Ironclad skillet. What was her complaint?', reviews)).toBe(
      'Note: the task asks about "Helga K"; this page shows "Handle gets far too hot" above "★★☆☆☆ 2 out of 5 · by Helga K.". If that answers the task, call done with it.',
    );
  });
});
