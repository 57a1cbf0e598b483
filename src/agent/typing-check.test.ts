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
});
