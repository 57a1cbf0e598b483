import { ELSEWHERE_HELD, LABEL_HELD, misplacedTyping } from './typing-check';

const contact = [
  'URL: http://energy.test/contact',
  'Title: Greenleaf Energy – Contact us',
  'Interactive elements:',
  '[5] textbox "Your name" empty required',
  '[6] textbox "Phone number" type=tel empty required',
  '[7] button "Request a call"',
  '[8] textbox "Search help articles" type=search empty',
  '[9] button "Search"',
].join('\n');
const task = "Ask Greenleaf Energy to ring me back. I'm Tom Baker and my number is 07700 900123.";

describe('a typing of a value where it does not belong', () => {
  it('is held with the field the task gives it for', () => {
    expect(misplacedTyping(task, contact, 8, 'Tom Baker')).toBe(
      `${ELSEWHERE_HELD} "Tom Baker" for [5] "Your name"; [8] is textbox "Search help articles". To type it there, call input_text with index 5; if [8] is what you meant, type into [8] again.`,
    );
    expect(misplacedTyping(task, contact, 8, '07700 900123')).toContain('for [6] "Phone number"');
  });

  it('is held when it is the label of another element the task does not give', () => {
    expect(misplacedTyping(task, contact, 8, 'Search')).toBe(`${LABEL_HELD} [9] button "Search" on this page, not a value the task gives. Type what the task gives for [8] "Search help articles"; if "Search" is what it takes, type it again.`);
  });

  it('is not held in the field it belongs to, into a field the task gives another value for, or for what the task names', () => {
    expect(misplacedTyping(task, contact, 5, 'Tom Baker')).toBeUndefined();
    // the name into the phone field, which the task gives the number for: the words decide
    expect(misplacedTyping(task, contact, 6, 'Tom Baker')).toBeUndefined();
    expect(misplacedTyping('Search the help articles for "Search" tips.', contact, 8, 'Search')).toBeUndefined();
    expect(misplacedTyping(task, contact, 8, 'meter reading')).toBeUndefined();
  });

  it("is held when another field holds it already and the task gives this field another value (a secret's name)", () => {
    const signIn = [
      'URL: http://library.test/signin.html',
      'Title: Sign in – Eastfield Libraries',
      'Interactive elements:',
      '[1] link "Eastfield Libraries"',
      '[2] textbox "Library card number" value="<secret>card_number</secret>" placeholder="e.g. 2900123456"',
      '[3] textbox "PIN" type=password empty',
      '[4] button "Sign in"',
    ].join('\n');
    const ask = 'When do I have to take The Hobbit back? My card number and PIN are in your secrets.';
    const secrets = [{ name: 'card_number' }, { name: 'pin' }];
    expect(misplacedTyping(ask, signIn, 3, '<secret>card_number</secret>', secrets)).toBe(
      `${ELSEWHERE_HELD} "<secret>pin</secret>" for [3] "PIN"; "<secret>card_number</secret>" is in [2] "Library card number" already. Type "<secret>pin</secret>" into [3]; if "<secret>card_number</secret>" is what it takes, type it again.`,
    );
    expect(misplacedTyping(ask, signIn, 3, '<secret>pin</secret>', secrets)).toBeUndefined();
    // a value no other field holds: the words decide
    expect(misplacedTyping(ask, signIn, 3, '1234', secrets)).toBeUndefined();
    // a value of the task's words, typed again into the field that takes it after another one: the words decide
    const form = ['Title: Send a request', 'Interactive elements:', '[2] textbox "Company" value="Alan Turing"', '[3] textbox "Your name (as in your passport)" empty'].join('\n');
    expect(misplacedTyping('Type Alan Turing into the "Full name" field and click Submit.', form, 3, 'Alan Turing')).toBeUndefined();
  });
});
