import { rightToolHint } from './tool-hints';

const observation = [
  'URL: http://shop.test/form',
  'Interactive elements:',
  '[1] link "Try again"',
  '[2] select "Country" value="France" options="France | Spain"',
  '[3] textbox "Name" empty',
  '[4] textbox "Phone" empty',
  '[5] textbox "Code" value="1" readonly',
  'Visible text:',
  'Call us at 555-0142',
].join('\n');

describe('the right tool for a wrong one', () => {
  it('tells a model pressing text as keys to type it or answer with it', () => {
    expect(rightToolHint('send_keys', { keys: '555-0142' }, 'Pressing 555-0142 failed: Unknown key: "555-0142"', observation)).toBe(
      '"555-0142" is not a key: send_keys presses keys such as Enter, Tab or Escape. To type text into a field, call input_text with the field\'s index; to answer the task with this text, call done with it.',
    );
  });

  it('tells a model typing into a link which elements are the fields', () => {
    const reason = 'Typing into [1] link "Try again" failed: Element is not an <input>, <textarea> or [contenteditable] element';
    expect(rightToolHint('input_text', { index: 1, text: 'x' }, reason, observation)).toBe('[1] is a link, not a field: the fields are [3] and [4].');
    expect(rightToolHint('input_text', { index: 2, text: 'Spain' }, '[2] select "Country" is a select: use select_option', observation)).toBe('[2] is a select: choose its option with select_option.');
    expect(rightToolHint('input_text', { index: 1, text: 'x' }, reason, 'Interactive elements:\n[1] link "Try again"\nVisible text:')).toBe(
      '[1] is a link, not a field, and the page shows no text field: to answer, call done with the text; to press it, call click_element.',
    );
  });

  it('tells a model choosing an option in the wrong list which list has it', () => {
    const settings = ['Interactive elements:', '[2] select "Language" value="English" options="English | Deutsch"', '[3] select "Show prices in" value="Euro (EUR)" options="Euro (EUR) | Swiss franc (CHF)"', 'Visible text:'].join('\n');
    const reason = '[2] select "Language" has no option "Swiss franc (CHF)"; its options are: "English", "Deutsch"';
    expect(rightToolHint('select_option', { index: 2, value: 'Swiss franc (CHF)' }, reason, settings)).toBe('"Swiss franc (CHF)" is an option of [3] select "Show prices in": choose it there, with index 3.');
    expect(rightToolHint('select_option', { index: 2, label: 'swiss franc' }, reason, settings)).toBe('"swiss franc" is an option of [3] select "Show prices in": choose it there, with index 3.');
    // no other list has it
    expect(rightToolHint('select_option', { index: 2, value: 'Yen' }, reason, settings)).toBeUndefined();
  });

  it('tells a model choosing a button\'s label in a radio group to press the button', () => {
    const jacket = ['Interactive elements:', '[1] radio "Olive" checked', '[2] radio "Navy"', '[3] radio "Black"', '[4] button "S"', '[5] button "M"', '[6] button "L"', '[7] button "XL"', '[8] button "Add to bag"', 'Visible text:'].join('\n');
    const reason = '[2] radio "Navy" has no option "L"; its options are: "Olive", "Navy", "Black"';
    expect(rightToolHint('select_option', { index: 2, value: 'L' }, reason, jacket)).toBe('"L" is not an option there: it is [6] button "L" of the page; press it with click_element, index 6.');
    // pressed already: nothing to press
    expect(rightToolHint('select_option', { index: 2, value: 'L' }, reason, jacket.replace('[6] button "L"', '[6] button "L" pressed'))).toBe('"L" is not an option there: it is [6] button "L" of the page, chosen already. Go on with the rest of the task.');
    // no element labelled so, or two
    expect(rightToolHint('select_option', { index: 2, value: 'XXL' }, reason, jacket)).toBeUndefined();
    expect(rightToolHint('select_option', { index: 2, value: 'L' }, reason, jacket.replace('[7] button "XL"', '[7] link "L"'))).toBeUndefined();
  });

  it('has nothing to say of other failures', () => {
    expect(rightToolHint('click_element', { index: 1 }, 'Clicking failed: the element is disabled', observation)).toBeUndefined();
    expect(rightToolHint('input_text', { index: 3, text: 'x' }, 'Typing failed: the element is disabled', observation)).toBeUndefined();
  });
});
