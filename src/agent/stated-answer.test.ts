import { askedKinds, figuresOf, ownWords, STATED_HELD, statedAnswer, statedExtreme, taskSendsTo } from './stated-answer';

const page = (...text: string[]) => ['URL: http://site.test/riverside', 'Title: Riverside Library', 'Interactive elements:', '[1] link "Home"', 'Visible text:', ...text, '(this is the whole page)'].join('\n');
const HOURS = page('Riverside Library', 'Opening hours', 'Monday to Friday 10:00–19:00', 'Saturday 10:00–17:00', 'Sunday 13:00–17:00');
const SUNDAY = 'What time does the Riverside library open on Sundays?';

describe('what a task asks to be told', () => {
  it('is the kinds of figure its question names, and nothing for a task that asks nothing', () => {
    expect(askedKinds(SUNDAY)).toEqual(['time']);
    expect(askedKinds('What is the price of the Blue Kettle? Answer with the price only.')).toEqual(['amount']);
    expect(askedKinds('Until when is my membership valid?')).toEqual(['time', 'date']);
    expect(askedKinds("What's the phone number of the seller?")).toEqual(['number']);
    expect(askedKinds('How heavy is the Corvid 14 laptop?')).toEqual(['quantity']);
    expect(askedKinds('Sign Katherine Johnson up for the webinar.')).toEqual([]);
    expect(askedKinds('Set the price alert to $40 and save it.')).toEqual([]);
  });

  it('reads figures of those kinds only, and none from an address', () => {
    expect(figuresOf('It opens at 13:00 and closes at 5 pm, €4.75 a ticket', ['time'])).toEqual(['13:00', '5 pm']);
    expect(figuresOf('It costs €4.75 (was 6,50 EUR)', ['amount'])).toEqual(['€4.75', '6,50 EUR']);
    expect(figuresOf('Valid until 14 April 2027, paid on March 3', ['date'])).toEqual(['14 April 2027', 'March 3']);
    expect(figuresOf('Call 06 4817 2093, or ext. 2615', ['number'])).toEqual(['06 4817 2093']);
    expect(figuresOf('The page is now http://127.0.0.1:36519/run-1/index.html', ['number', 'amount', 'time'])).toEqual([]);
  });
});

describe('an answer in the words that the page shows', () => {
  it('is held with the line that shows it', () => {
    const note = statedAnswer(SUNDAY, 'The Riverside library opens on Sundays from 13:00 to 17:00.', HOURS);
    expect(note).toBe(
      `${STATED_HELD}: you wrote "The Riverside library opens on Sundays from 13:00 to 17:00.", and this page shows "Sunday 13:00–17:00". If it does not answer the task, call the same action again; if it does, call done with the answer now.`,
    );
  });

  it('is not held when the page does not show a figure of the words, or the words give none the task asks for', () => {
    expect(statedAnswer(SUNDAY, 'The Riverside library is open on Sundays from 10:00 AM to 2:00 PM.', HOURS)).toBeUndefined();
    expect(statedAnswer(SUNDAY, 'I open the page of the Riverside library.', HOURS)).toBeUndefined();
    expect(statedAnswer(SUNDAY, undefined, HOURS)).toBeUndefined();
    // a price shown, the task asks for a phone number
    const ad = page('Gravel bike', '€640', 'Phone: 06 •• •• •• ••');
    expect(statedAnswer("What's the phone number of the person selling this bike?", 'The bike costs €640; I press "Show phone number".', ad)).toBeUndefined();
    // a task that asks nothing
    expect(statedAnswer('Book a table for 13:00.', 'The page shows 13:00 on Sunday.', HOURS)).toBeUndefined();
  });

  it('leaves out what the task gives, and reads only the page text (not the notes after it)', () => {
    const invoices = page('Invoices', 'Invoice #1024: €498.10', 'Invoice #1025: €512.40');
    expect(statedAnswer('What is the amount of invoice #1025?', 'I look for invoice #1025 further down.', invoices)).toBeUndefined();
    expect(statedAnswer('What is the amount of invoice #1025?', "The page shows 'Invoice #1025: €512.40'.", invoices)).toContain('this page shows "Invoice #1025: €512.40"');
    const noted = `${page('Invoices')}\nNote: the task asks about "#1025"; this page shows "Invoice #1025: €512.40".`;
    expect(statedAnswer('What is the amount of invoice #1025?', "The page shows 'Invoice #1025: €512.40'.", noted)).toBeUndefined();
  });

  it('is not held with a line of another item than the task names (it is not the answer)', () => {
    const invoices = page('Invoices', 'Invoice #1014: €418.82', 'Invoice #1015: €455.95');
    expect(statedAnswer('What is the amount of invoice #1025?', 'The page shows the amount of invoice #1025 as €455.95.', invoices)).toBeUndefined();
    expect(statedAnswer('What is the amount of invoice #1015?', 'The page shows the amount of invoice #1015 as €455.95.', invoices)).toContain('this page shows "Invoice #1015: €455.95"');
  });

  it('finds a phone number however it is spaced, and a price beside its period', () => {
    const ad = page('Seller', 'Phone: 06 4817 2093', 'Help desk: 030 760 1200');
    expect(statedAnswer("What's the seller's phone number?", "The seller's number is 0648172093.", ad)).toContain('this page shows "Phone: 06 4817 2093"');
    const plans = page('Gold plan', '$42/month, billed yearly');
    expect(statedAnswer('What is the monthly price of the Gold plan?', 'The Gold plan price is $42 per month.', plans)).toContain('"$42/month, billed yearly"');
    expect(statedAnswer('What is the monthly price of the Gold plan?', 'The Gold plan price is $4 per month.', plans)).toBeUndefined();
  });
});

describe('the cheapest line named in the words', () => {
  const task = 'Which product in the Garden category is the cheapest? Answer with its name only.';
  const garden = ['URL: http://store.test/list.html?cat=garden', 'Title: Garden category', 'Interactive elements:', '[1] link "All categories"', 'Visible text:', 'Garden category', 'Garden Hose: $19', 'Rake: $15', 'Trowel: $7', 'Watering Can: $12'].join('\n');
  it('is held with that line when the action looks elsewhere', () => {
    expect(statedExtreme(task, 'The cheapest product is Trowel, which costs $7.', garden, 'All categories')).toBe(
      `${STATED_HELD}: you wrote "The cheapest product is Trowel, which costs $7.", and this page shows "Trowel: $7", the lowest price of the page. If it does not answer the task, call the same action again; if it does, call done with the answer now.`,
    );
    expect(statedExtreme(task, "I will click on the 'Trowel' link to see its price.", garden)).toContain('"Trowel: $7", the lowest price');
  });

  it('is not held for a press of that thing, another name, a name the task gives, or a task that asks a figure or nothing', () => {
    const linked = garden.replace('[1] link "All categories"', '[1] link "All categories"\n[2] link "Trowel"');
    expect(statedExtreme(task, 'The cheapest is Trowel; I open it.', linked, 'Trowel')).toBeUndefined();
    expect(statedExtreme(task, 'The cheapest product is the Rake.', garden, 'All categories')).toBeUndefined();
    expect(statedExtreme(task, 'I look at the Garden category.', garden, 'All categories')).toBeUndefined();
    expect(statedExtreme('Which Garden product is the cheapest? Tell me its price.', 'The cheapest is Trowel.', garden, 'All categories')).toBeUndefined();
    expect(statedExtreme('Open the cheapest product of the Garden category.', 'The cheapest is Trowel.', garden, 'All categories')).toBeUndefined();
    expect(statedExtreme(task, undefined, garden)).toBeUndefined();
  });
});

describe('a stated answer on a line of another day of the week', () => {
  it('is not held as if the line answered', () => {
    const events = page('What\'s on', 'Knit and natter, Thursdays 14:00 (Riverside)');
    expect(statedAnswer(SUNDAY, 'The Riverside library opens on Sundays at 14:00.', events)).toBeUndefined();
  });
});

describe("the agent's own words", () => {
  const held = 'Not done yet: this page shows "Gold plan: $42 per month", which the task asks about. If it does not answer the task, call switch_tab again; if it does, call done with it now.';
  const gold = page('Price list', 'Silver plan: $24 per month', 'Gold plan: $42 per month');
  const task = 'Open the price list and tell me the monthly price of the Gold plan.';

  it('leave out the sentences copied from the note of the action held before', () => {
    const echo = "The page shows 'Gold plan: $42 per month', which the task asks about. If it does not answer the task, call switch_tab again; if it does, call done with it now.";
    expect(ownWords(echo, held)).toBeUndefined();
    expect(statedAnswer(task, ownWords(echo, held), gold)).toBeUndefined();
    // (the same words, no note before them: held as its own)
    expect(statedAnswer(task, echo, gold)).toContain(STATED_HELD);
  });

  it('keep what the agent wrote itself, beside a copied sentence', () => {
    const mixed = 'I see the price list. The Gold plan costs $42 a month, so I switch back to the first tab. If it does not answer the task, call switch_tab again; if it does, call done with it now.';
    expect(ownWords(mixed, held)).toBe('I see the price list. The Gold plan costs $42 a month, so I switch back to the first tab.');
    expect(statedAnswer(task, ownWords(mixed, held), gold)).toContain('you wrote "I see the price list. The Gold plan costs $42 a month');
    expect(ownWords(mixed, undefined)).toBe(mixed);
  });
});

describe('a press the task itself asks for', () => {
  const home = 'URL: http://shop.test/\nTitle: Garden Store\nInteractive elements:\n[2] link "Shipping policy"\nVisible text:\nOrders ship within 2 days.';
  const task = 'Open the Shipping policy page and tell me within how many days returns are accepted.';
  it('is the link the task says to open, from another page', () => {
    expect(taskSendsTo(task, 'Shipping policy', home)).toBe(true);
    expect(taskSendsTo('Go to your Order history and tell me the last order\'s total.', 'Order history', home)).toBe(true);
  });
  it('is not a link the task does not send to, one it only mentions, nor the page already open', () => {
    expect(taskSendsTo(task, 'Contact', home)).toBe(false);
    expect(taskSendsTo('What does the Shipping policy say about returns?', 'Shipping policy', home)).toBe(false);
    expect(taskSendsTo(task, 'Shipping policy', home.replace('Garden Store', 'Shipping policy – Garden Store'))).toBe(false);
    expect(taskSendsTo(task, undefined, home)).toBe(false);
    expect(taskSendsTo('Open it.', 'It', home)).toBe(false);
  });
});
