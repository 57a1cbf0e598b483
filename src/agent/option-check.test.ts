import { betterOption, heldOption, heldSameOption, heldSize, sizeNote } from './option-check';

const task = 'Make Zaragoza in Spain my home city on Skycast.';
const listbox = [
  'Interactive elements:',
  '[1] combobox "Home city" value="Zaragoza" expanded',
  '[4] option "Zaragoza, Aragon, Spain"',
  '[5] option "Zaragoza, Puebla, Mexico"',
  '[6] option "Zaragoza, Antioquia, Colombia"',
  '[2] select "Units" value="Celsius, km/h" options="Celsius, km/h | Fahrenheit, mph"',
  '[3] button "Save settings"',
  'Visible text:',
  'Settings',
].join('\n');

describe('the option of a list that fits the task better', () => {
  it('is the one that holds more of the task words than any other, when the chosen one holds fewer', () => {
    const options = [{ text: 'Zaragoza, Aragon, Spain' }, { text: 'Zaragoza, Puebla, Mexico' }];
    expect(betterOption(task, options, options[1])).toEqual(options[0]);
    expect(betterOption(task, options, options[0])).toBeUndefined();
    // a tie says nothing: the task does not tell them apart
    expect(betterOption('Make Zaragoza my home city.', options, options[1])).toBeUndefined();
  });

  it('holds a press or a choice of a listbox option, and a select_option of a native list, naming the word', () => {
    expect(heldOption(task, listbox, 'click_element', { index: 5 })).toEqual({
      key: 'Zaragoza, Puebla, Mexico',
      note: 'Not chosen: the task names "Spain", which [4] "Zaragoza, Aragon, Spain" has and [5] "Zaragoza, Puebla, Mexico" has not. Choose [4] "Zaragoza, Aragon, Spain" instead; if [5] "Zaragoza, Puebla, Mexico" is what the task means, press [5] again.',
    });
    expect(heldOption(task, listbox, 'select_option', { index: 6, value: 'Zaragoza, Antioquia, Colombia' })?.note).toMatch(/^Not chosen: the task names "Spain", which \[4\] .* choose it again\.$/);
    expect(heldOption('Show the forecast in Fahrenheit.', listbox, 'select_option', { index: 2, value: 'Celsius, km/h' })?.note).toBe(
      'Not chosen: the task names "Fahrenheit", which "Fahrenheit, mph" has and "Celsius, km/h" has not. Choose "Fahrenheit, mph" instead; if "Celsius, km/h" is what the task means, choose it again.',
    );
  });

  it('counts no word of the list\'s own label, nor an option that asks for a choice', () => {
    const race = ['Interactive elements:', '[5] select "T-shirt size" value="Choose a size" options="Choose a size | XS | S | M | L | XL"', 'Visible text:'].join('\n');
    expect(heldOption('Enter me: Ana Silva, T-shirt size M.', race, 'select_option', { index: 5, value: 'M' })).toBeUndefined();
    const city = [{ text: '-- Select your city --' }, { text: 'Lyon' }];
    expect(betterOption('Set my city to Lyon.', city, city[1])).toBeUndefined();
    expect(betterOption('Make Zaragoza in Spain my home city.', [{ text: 'Spain city' }, { text: 'Madrid' }], { text: 'Madrid' }, 'Home city')).toEqual({ text: 'Spain city' });
  });

  it('holds nothing for the best option, a list whose options the task does not tell apart, or an element that is no option', () => {
    expect(heldOption(task, listbox, 'click_element', { index: 4 })).toBeUndefined();
    expect(heldOption(task, listbox, 'select_option', { index: 2, value: 'Celsius, km/h' })).toBeUndefined();
    expect(heldOption(task, listbox, 'click_element', { index: 3 })).toBeUndefined();
    expect(heldOption(task, listbox, 'input_text', { index: 1, text: 'Zarag' })).toBeUndefined();
  });
});

describe('a size other than the one the task asks for', () => {
  const sizes = ['Interactive elements:', '[1] radio "Navy"', '[2] radio "Olive" checked', '[3] button "S"', '[4] button "M"', '[5] button "L"', '[6] button "XL"', '[7] select "Size" value="Choose" options="Choose | S | M | L"', '[8] button "Add to bag"', 'Visible text:', 'Harbor rain jacket'].join('\n');
  const task = 'Put the Harbor rain jacket in navy, size L, in my bag.';

  it('is held with the element of the size asked for, pressed or chosen in a list', () => {
    expect(heldSize(task, sizes, 'click_element', { index: 3 })).toEqual({
      key: 'size S',
      note: 'Not chosen: the task names size L, which is [5] "L"; [3] "S" is size S. Choose [5] instead; if [3] is what the task means, press [3] again.',
    });
    expect(heldSize(task, sizes, 'select_option', { index: 7, value: 'M' })?.note).toBe('Not chosen: the task names size L, which is "L" of [7]; "M" is size M. Choose "L" instead; if "M" is what the task means, choose it again.');
  });

  it('is not held for the size asked, another element, a task without a size, or a page without the size asked', () => {
    expect(heldSize(task, sizes, 'click_element', { index: 5 })).toBeUndefined();
    expect(heldSize(task, sizes, 'click_element', { index: 8 })).toBeUndefined();
    expect(heldSize('Put the Harbor rain jacket in my bag.', sizes, 'click_element', { index: 3 })).toBeUndefined();
    expect(heldSize('Buy it in size XXL.', sizes, 'click_element', { index: 3 })).toBeUndefined();
    expect(heldSize(task, sizes, 'select_option', { index: 7, value: 'L' })).toBeUndefined();
  });

  it('reads sizes in words, on the page and in the task', () => {
    const words = ['Interactive elements:', '[1] radio "Small"', '[2] radio "Medium"', '[3] radio "Large (40–42)"', 'Visible text:', 'Size'].join('\n');
    expect(heldSize(task, words, 'click_element', { index: 1 })?.note).toBe('Not chosen: the task names size L, which is [3] "Large (40–42)"; [1] "Small" is size S. Choose [3] instead; if [1] is what the task means, press [1] again.');
    expect(heldSize('A T-shirt in size medium, please.', sizes, 'click_element', { index: 3 })?.key).toBe('size S');
    expect(heldSize('A T-shirt in size medium, please.', words, 'click_element', { index: 2 })).toBeUndefined();
  });
});

describe('the size the task asks for, not chosen yet', () => {
  const task = 'Put the Harbor rain jacket in navy, size L, in my bag.';
  const page = (l: string) => ['Interactive elements:', '[3] radio "Navy" checked', '[5] button "S"', `[7] ${l}`, '[10] button "Add to bag"', 'Visible text:', 'Size'].join('\n');
  it('is named with its element until it is pressed, checked or selected', () => {
    expect(sizeNote(task, page('button "L"'))).toBe('Note: the task asks for size L: [7] button "L" is not chosen yet; press it.');
    expect(sizeNote(task, page('radio "Large"'))).toBe('Note: the task asks for size L: [7] radio "Large" is not chosen yet; press it.');
    expect([sizeNote(task, page('button "L" pressed')), sizeNote(task, page('radio "L" checked')), sizeNote(task, page('option "L" selected'))]).toEqual([undefined, undefined, undefined]);
    expect(sizeNote('Put the jacket in my bag.', page('button "L"'))).toBeUndefined();
    expect(sizeNote(task, page('button "XL"'))).toBeUndefined();
  });
});

describe('an option the task means without its words', () => {
  it('fits better than one the task neither says nor means', () => {
    const options = [{ text: 'Choose a topic' }, { text: 'My parcel is late' }, { text: 'My parcel arrived damaged' }, { text: 'Something else' }];
    const task = 'My Parcelly parcel PY 4410 2291 came with the box crushed and the vase inside broken. Let their support know.';
    expect(betterOption(task, options, options[1], 'What is it about?')).toEqual(options[2]);
    expect(betterOption(task, options, options[2], 'What is it about?')).toBeUndefined();
  });
});

describe('a choice of the option its list holds already', () => {
  const ticket = (value: string) =>
    ['URL: http://desk.test/ticket', 'Interactive elements:', `[1] combobox "Priority ${value}" value="${value}" options="Low | Normal | High"`, '[3] option "Low"', '[4] option "Normal"', '[5] option "High"', '[2] button "Save ticket"', 'Visible text:', 'Support ticket'].join('\n');
  it("is held with the list's field and the button that saves", () => {
    expect(heldSameOption(ticket('High'), 'select_option', { index: 5, value: 'High' })).toEqual({
      key: '1',
      note: 'Not chosen: it is chosen already: [1] combobox "Priority High" holds "High". Go on with the rest of the task (press [2] "Save ticket" to save it); if it must be chosen again, choose it again.',
    });
    const select = ['Interactive elements:', '[1] select "City" value="Lyon" options="Paris | Lyon"', '[2] button "Save profile"'].join('\n');
    expect(heldSameOption(select, 'select_option', { index: 1, value: 'Lyon' })?.note).toMatch(/^Not chosen: it is chosen already: \[1\] select "City" holds "Lyon"\./);
  });

  it('is not held for another option, or a press of the field itself', () => {
    expect(heldSameOption(ticket('Normal'), 'select_option', { index: 5, value: 'High' })).toBeUndefined();
    expect(heldSameOption(ticket('High'), 'click_element', { index: 1 })).toBeUndefined();
    // a press of the option is not held here (a press the agent's words name otherwise is index-check.ts's)
    expect(heldSameOption(ticket('High'), 'click_element', { index: 5 })).toBeUndefined();
    const select = ['Interactive elements:', '[1] select "City" value="Paris" options="Paris | Lyon"'].join('\n');
    expect(heldSameOption(select, 'select_option', { index: 1, value: 'Lyon' })).toBeUndefined();
  });
});
