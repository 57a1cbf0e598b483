import { formSentNote, hollow, refusalLine, stillNamed, tableLines } from './done-check';

const page = (...elements: string[]) => ['URL: http://shop.test/step2', 'Title: Checkout: step 2 of 2', 'Interactive elements:', ...elements, 'Visible text:', 'Shipping'].join('\n');
const TASK = 'Check out with the name Joan Clarke and Express shipping, and place the order.';

describe('what a new page still holds that the task names', () => {
  it('is an option it names not chosen yet, and a button every word of which it says', () => {
    const step2 = page('[1] radio "Standard (5 days)" checked', '[2] radio "Express (1 day)"', '[3] button "Place order"');
    expect(stillNamed(TASK, step2)).toEqual(['[2] radio "Express (1 day)"', '[3] button "Place order"']);
    expect(formSentNote(undefined, stillNamed(TASK, step2))).toBe('Note: the form you filled was sent and a new page opened, which shows what the task still names: [2] radio "Express (1 day)", [3] button "Place order".');
  });

  it('is not an option already chosen, nor a button with a word the task does not say', () => {
    expect(stillNamed(TASK, page('[1] radio "Standard (5 days)"', '[2] radio "Express (1 day)" checked', '[3] button "Continue shopping"'))).toEqual([]);
    const thanks = page('[1] button "Send another message"', '[2] link "Home"');
    expect(stillNamed('Fill in the contact form with the message "Hello", then send it.', thanks)).toEqual([]);
    expect(formSentNote(undefined, [])).toBe('Note: the form you filled was sent and a new page opened: if the task asks for nothing more, call done.');
  });
});

describe('the line of a page that turns down what was sent', () => {
  const page = (...text: string[]) => ['URL: http://site.test/after', 'Title: Welcome', 'Interactive elements:', '(none in the viewport)', 'Visible text:', ...text, '(this is the whole page)'].join('\n');
  const form = page('Create your account');
  it('is read among the lines that appeared', () => {
    expect(refusalLine(form, page('Welcome', 'You must accept the terms of service.'))).toBe('You must accept the terms of service.');
    expect(refusalLine(form, page('Sign-up failed: the e-mail is taken'))).toBe('Sign-up failed: the e-mail is taken');
    expect(refusalLine(form, page('Your phone number is required.'))).toBe('Your phone number is required.');
  });
  it('is none on a page that took it, or when the line was there before', () => {
    expect(refusalLine(form, page('Welcome, Ada', 'Your account is ready.'))).toBeUndefined();
    expect(refusalLine(page('Create your account', 'Fields marked * are required'), page('Create your account', 'Fields marked * are required', 'Thanks'))).toBeUndefined();
    // the next step of a form, with its standing hint
    expect(refusalLine(form, page('Step 2 of 2: delivery', 'Fields marked * are required', 'All fields are required unless optional'))).toBeUndefined();
  });
});

describe('an empty result, and the table a page shows', () => {
  it('holds nothing when no figure, flag or text is in it', () => {
    expect(hollow({ people: [] })).toBe(true);
    expect(hollow({ people: [{ name: ' ', city: '' }], note: null })).toBe(true);
    expect(hollow([])).toBe(true);
    expect(hollow({ people: [{ name: 'Ada' }] })).toBe(false);
    expect(hollow({ count: 0 })).toBe(false);
    expect(hollow({ ok: false })).toBe(false);
  });
  it('reads a table as two lines or more of as many cells, not a menu line', () => {
    const text = (...lines: string[]) => ['URL: http://team.test/', 'Tabs: [0] Team | [1] Other', 'Visible text:', ...lines].join('\n');
    expect(tableLines(text('Home | Team | Contact', 'Name | City', 'Ada | London', 'Alan | Manchester'))).toEqual(['Name | City', 'Ada | London', 'Alan | Manchester']);
    expect(tableLines(text('Home | Team | Contact', 'Ada Lovelace lives in London.'))).toEqual([]);
  });
});
