import { emptyTextFields, givenValues, otherWeekday, searchTerms, taskPassword, untypedValues, valuesNamed } from './task-values';

describe('givenValues', () => {
  it.each([
    ['Reject all cookies, then ask for a callback to the phone number 555-0100.', ['555-0100']],
    ['Sign up as Ada, ada@example.com', ['ada@example.com']],
    ['Send the message "Please call me back" to support@shop.test, phone +44 20 7946 0958', ['Please call me back', 'support@shop.test', '+44 20 7946 0958']],
    ["Set the name to 'Grace Hopper' and don't change the rest, it's fine", ['Grace Hopper']],
    ['Book the table for 2026-12-03 at 19:00 for 4 people, order #10253', []],
    ['Log in as <secret>user</secret> with "<secret>password</secret>"', []],
    ['Type “Leave at the door” and “leave at the door”', ['Leave at the door']],
    ['What does the cheapest chair cost?', []],
    ['[verify-tex-1764445000000-123456] send the form as Ada', []],
    ['Type Alan Turing into the "Full name" field and click the blue "Submit" button, then open the "Help" tab', []],
    ['Set the "Nickname" field to "Ada" and press "Save"', ['Ada', 'Save']],
    // a password given in words (not a secret's placeholder, not the name of the field)
    ['Until when is my membership valid? Log in with sam@example.com, password Peach-Tree-77.', ['sam@example.com', 'Peach-Tree-77']],
    ['Sign in (my password is: hunter2) and read the balance', ['hunter2']],
    ['Log in with <secret>mail</secret> and password <secret>pw</secret>', []],
    ['Type the password into the password field and press Log in', []],
  ])('%s', (prompt, values) => {
    expect(givenValues(prompt)).toEqual(values);
  });
});

describe('untypedValues', () => {
  const prompt = 'Ask for a callback to 555-0100 and leave the note "after six" at ann@example.com';

  it('leaves out what was typed (a number by its digits) or chosen, and what the page shows', () => {
    expect(untypedValues(prompt, [], '')).toEqual(['after six', 'ann@example.com', '555-0100']);
    expect(untypedValues(prompt, ['555 0100', 'After  Six'], '')).toEqual(['ann@example.com']);
    expect(untypedValues(prompt, [], '[3] textbox "Email" value="ann@example.com"\nCall 5550100')).toEqual(['after six']);
  });

  it('names at most three', () => {
    expect(untypedValues('"a" "b" "c" "d"', [], '')).toEqual(['a', 'b', 'c']);
  });
});

describe('emptyTextFields', () => {
  it('finds the empty text fields of an observation, not filled, disabled or other controls', () => {
    const observation = [
      '[1] textbox "Name" value="Ada"',
      '[2] textbox "Phone number" type=tel empty',
      '[3] searchbox "Search" empty',
      '[4] textbox "Code" empty disabled',
      '[5] checkbox "Keep me posted" empty',
      '[6] button "Send"',
    ].join('\n');
    expect(emptyTextFields(observation)).toEqual([
      { index: 2, label: 'Phone number' },
      { index: 3, label: 'Search' },
    ]);
  });
});

describe('valuesNamed', () => {
  it('quotes the values after a colon, or says nothing', () => {
    expect(valuesNamed(['555-0100', 'a@b.co'])).toBe(': "555-0100", "a@b.co"');
    expect(valuesNamed([])).toBe('');
  });
});

describe('what a search field may take from the task', () => {
  const shop = 'URL: http://127.0.0.1:4000/run/d-bookbarn/index.html\nTitle: Bookbarn – second-hand books from independent sellers\nInteractive elements:\n[1] textbox "Title, author or ISBN" type=search empty';
  it('is a quoted text, or else the first name the task gives that is not the site’s own', () => {
    expect(searchTerms('Find the cheapest copy of Dune on Bookbarn and tell me which shop sells it.', shop)).toEqual(['Dune']);
    expect(searchTerms('Look up "wireless mouse" and tell me the cheapest.', shop)).toEqual(['wireless mouse']);
    expect(searchTerms('Which shop sells The Left Hand of Darkness for the least?', shop)).toEqual(['The Left Hand of Darkness']);
  });

  it('is nothing when the task names nothing but the site, or gives only an address to type', () => {
    expect(searchTerms('Find the cheapest book on Bookbarn.', shop)).toEqual([]);
    expect(searchTerms('Please find me the cheapest kettle. I need it by Friday.', shop)).toEqual([]);
    expect(searchTerms("Ask Greenleaf Energy to ring me back. I'm Tom Baker.", shop)).toEqual([]);
    expect(searchTerms('Send it to "ada@example.com".', shop)).toEqual([]);
  });
});

describe('taskPassword', () => {
  it('reads the password a task gives after the word, and is never a search term', () => {
    expect(taskPassword('Log in with sam@example.com, password Peach-Tree-77.')).toBe('Peach-Tree-77');
    expect(taskPassword('use the PIN 4471 to unlock')).toBe('4471');
    expect(taskPassword('Reset my password for me')).toBeUndefined();
    expect(taskPassword('the password field is empty')).toBeUndefined();
    expect(searchTerms('Find my order. Password "Open Sesame"', 'Title: Shop')).toEqual([]);
  });
});

describe('otherWeekday', () => {
  it('is true for a line of days of the week none of which the task names', () => {
    expect(otherWeekday('What time does it open on Sundays?', 'Knit and natter, Thursdays 14:00')).toBe(true);
    expect(otherWeekday('What time does it open on Sundays?', 'Saturday and Sunday 10:00–16:00')).toBe(false);
    expect(otherWeekday('What time does it open on Sundays?', 'Opening hours 09:00–17:00')).toBe(false);
    expect(otherWeekday('What time does it open?', 'Thursdays 14:00')).toBe(false);
  });
});
