import { toolSpecs } from './tools';
import { boundToPage, idlePresses, navigateNeeded, optionChoosers, replacingTyping, textFields, SetControls, observedIndexes, observedTabs, otherTabs, tabsTitled, showsWholePage, SpentTools, unavailable, uselessOn } from './page-bound-tools';
import { answerSchema, describeTools } from '../model/answer-format';

const observation = ['URL: http://x/', 'Title: Shop', 'Tabs: [0] Shop (active) | [1] Help', 'Interactive elements:', '[3] link "Home"', '[7] button "Buy"', 'Visible text:', 'Price [9] is not an element'].join('\n');

describe('tools bound to the page', () => {
  it('reads the element and tab indexes the observation lists', () => {
    expect(observedIndexes(observation)).toEqual([3, 7]);
    expect(observedTabs(observation)).toEqual([0, 1]);
  });

  it('offers switch_tab only the tabs that are not active', () => {
    expect(otherTabs(observation)).toEqual([1]);
    expect(otherTabs('Tabs: [0] Plans | Acme | [1] Price list | Acme (active) | [2] Help')).toEqual([0, 2]);
    expect(otherTabs('Tabs: [0] Shop (active)')).toEqual([]);
  });

  it('finds the other tabs of a title, a clipped one too', () => {
    const long = 'A price list with a title far longer than sixty characters in all';
    expect(tabsTitled(`Tabs: [0] Plans | [1] Price list (active) | [2] Plans | [3] ${long.slice(0, 59)}…`, 'Plans')).toEqual([0, 2]);
    expect(tabsTitled(`Tabs: [0] Plans (active) | [1] ${long.slice(0, 59)}…`, long)).toEqual([1]);
    expect(tabsTitled('Tabs: [0] Plans (active) | [1] Price list', 'Plans')).toEqual([]);
    expect(tabsTitled('Tabs: [0] Plans (active) | [1] Price list', '')).toEqual([]);
  });

  it("offers the observation's indexes as the only values of index, tabs for switch_tab", () => {
    const bound = boundToPage(toolSpecs(), observation);
    const index = (name: string) => (bound.find((t) => t.name === name)!.parameters.properties as any).index;
    expect(index('click_element').enum).toEqual([3, 7]);
    expect(index('scroll').enum).toEqual([3, 7]);
    expect(index('click_element')['x-element-labels']).toEqual({ 3: 'Home', 7: 'Buy' });
    expect(index('switch_tab')['x-element-labels']).toBeUndefined();
    expect(index('switch_tab').enum).toEqual([1]);
    expect(bound.find((t) => t.name === 'navigate')).toEqual(toolSpecs().find((t) => t.name === 'navigate'));
  });

  it("leaves the tools' description unchanged from page to page, and the element tools out of the grammar on a page without elements", () => {
    const empty = boundToPage(toolSpecs(), 'URL: http://x/\nTitle: Text only\nTabs: [0] Text only (active)\nVisible text:\nHello');
    expect(describeTools(empty)).toBe(describeTools(boundToPage(toolSpecs(), observation)));
    const names = ((answerSchema(empty) as any).properties.actions.items.oneOf as any[]).map((c) => c.properties.name.const);
    expect(names).not.toContain('click_element');
    expect(names).not.toContain('input_text');
    expect(names).toEqual(expect.arrayContaining(['done', 'navigate', 'scroll', 'extract']));
    // Its one tab is the active one: nothing to switch to.
    expect(names).not.toContain('switch_tab');
    // scroll's index is optional: without elements it can only be left out (null).
    const scroll = ((answerSchema(empty) as any).properties.actions.items.oneOf as any[]).find((c) => c.properties.name.const === 'scroll');
    expect(scroll.properties.arguments.properties.index).toEqual({ type: 'null' });
  });
});

describe('elements a click cannot change', () => {
  const plans = ['URL: http://x/', 'Interactive elements:', '[1] radio "Basic"', '[2] radio "Standard" checked', '[3] radio "checked \\"Premium\\""', '[4] checkbox "Terms" checked', '[5] button "Submit" disabled', '[6] button "Save"', 'Visible text:'].join('\n');

  it('are a checked radio and a disabled element; a checked checkbox is not (a press unticks it)', () => {
    expect(idlePresses(plans)).toEqual([2, 5]);
  });

  it('are left out of click_element and select_option, whose labels stay; other tools keep them', () => {
    const bound = boundToPage(toolSpecs(), plans);
    const index = (name: string) => (bound.find((t) => t.name === name)!.parameters.properties as any).index;
    expect(index('click_element').enum).toEqual([1, 3, 4, 6]);
    expect(index('click_element')['x-element-labels'][2]).toBe('Standard');
    // The group's other radios are still chosen by their own index.
    expect(index('select_option').enum).toEqual([1, 3]);
    expect(index('scroll').enum).toEqual([1, 2, 3, 4, 5, 6]);
  });
});

describe('the elements input_text may type into', () => {
  const page = ['URL: http://x/', 'Interactive elements:', '[1] link "Next page"', '[2] textbox "Search" type=search empty', '[3] searchbox "Find"', '[4] combobox "City"', '[5] spinbutton "Quantity"', '[6] button "Go"', '[7] select "Country"', '[8] textbox "Date" type=date', '[9] file "CV" empty'].join('\n');

  it('are text fields: textbox, searchbox, combobox, spinbutton', () => {
    expect(textFields(page)).toEqual([2, 3, 4, 5, 8]);
  });

  it('are the only indexes input_text is offered; click_element keeps every element but the textboxes, selects and file inputs', () => {
    const bound = boundToPage(toolSpecs(), page);
    const index = (name: string) => (bound.find((t) => t.name === name)!.parameters.properties as any).index;
    expect(index('input_text').enum).toEqual([2, 3, 4, 5, 8]);
    expect(index('click_element').enum).toEqual([1, 4, 5, 6]);
    expect(index('select_option').enum).toEqual([4, 7]);
  });

  it('replace what a field holds unless the task asks to add to it, with the same description', () => {
    const clear = (specs: ReturnType<typeof toolSpecs>) => (specs.find((t) => t.name === 'input_text')!.parameters.properties as any).clear;
    const bound = replacingTyping(boundToPage(toolSpecs(), page), 'Fill in the contact form with the email "ada@example.com", then send it.');
    expect(clear(bound).const).toBe(true);
    const grammar = JSON.stringify(answerSchema(bound.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters }))));
    expect(grammar).toContain('"clear":{"oneOf":[{"const":true},{"type":"null"}]}');
    expect(describeTools(bound.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })))).toBe(describeTools(boundToPage(toolSpecs(), page).map((t) => ({ name: t.name, description: t.description, parameters: t.parameters }))));
    expect(clear(replacingTyping(toolSpecs(), 'Append " (urgent)" to the subject.')).const).toBeUndefined();
    expect(clear(replacingTyping(toolSpecs(), 'Add your initials at the end of the note.')).const).toBeUndefined();
  });

  it('leave input_text out of the grammar on a page without a text field', () => {
    const links = boundToPage(toolSpecs(), 'URL: http://x/\nInteractive elements:\n[1] link "Next page"\nVisible text:\nResults');
    expect(choosable(links)).not.toContain('input_text');
    expect(choosable(links)).toContain('click_element');
  });
});

describe('the elements select_option may choose in', () => {
  const page = ['URL: http://x/', 'Interactive elements:', '[1] link "Previous page"', '[2] select "Size"', '[3] combobox "Colour"', '[4] listbox "Fruit"', '[5] option "Apple"', '[6] radio "Express"', '[7] button "Save"', '[8] checkbox "Gift wrap"'].join('\n');

  it('are selects, listboxes and comboboxes (and their options) and radios', () => {
    expect(optionChoosers(page)).toEqual([2, 3, 4, 5, 6]);
    const index = (boundToPage(toolSpecs(), page).find((t) => t.name === 'select_option')!.parameters.properties as any).index;
    expect(index.enum).toEqual([2, 3, 4, 5, 6]);
  });

  it('leave select_option out of the grammar on a page without one', () => {
    const links = boundToPage(toolSpecs(), 'URL: http://x/\nInteractive elements:\n[1] link "Previous page"\nVisible text:\nResults');
    expect(choosable(links)).not.toContain('select_option');
  });
});

describe('the fields and boxes the agent set', () => {
  const form = (name: string, email: string, url = 'http://x/contact') =>
    [`URL: ${url}`, 'Interactive elements:', `[1] textbox "Name" ${name ? `value=${JSON.stringify(name)}` : 'empty'}`, `[2] textbox "Email" type=email ${email ? `value=${JSON.stringify(email)}` : 'empty'}`, '[3] textbox "Message" empty', '[4] button "Send"'].join('\n');

  it('are those that still hold what it typed, on that page only', () => {
    const typed = new SetControls();
    typed.typedInto(form('', ''), 1, 'Ada Lovelace');
    typed.typedInto(form('Ada Lovelace', ''), 2, 'Please send my "invoice"');
    expect(typed.filled(form('Ada Lovelace', 'Please send my "invoice"'))).toEqual([1, 2]);
    // The page emptied or changed a field: offered again.
    expect(typed.filled(form('', 'someone@else'))).toEqual([]);
    // One the form would refuse is offered again.
    expect(typed.filled(form('Ada Lovelace', 'Please send my "invoice"').replace(/invoice\\""$/m, 'invoice\\"" invalid'))).toEqual([1]);
    // The same indexes on another page are other fields.
    expect(typed.filled(form('Ada Lovelace', 'Please send my "invoice"', 'http://x/other'))).toEqual([]);
    typed.reset();
    expect(typed.filled(form('Ada Lovelace', ''))).toEqual([]);
  });

  it('are also the selects still holding the option the agent chose, left out of select_option', () => {
    const settings = (value: string) => ['URL: http://x/settings', 'Interactive elements:', `[1] select "Frequency" value="${value}" options="Daily | Weekly | Monthly"`, '[2] button "Save"'].join('\n');
    const set = new SetControls();
    set.typedInto(settings('Monthly'), 1, 'weekly');
    expect(set.filled(settings('Weekly'))).toEqual([1]);
    expect(set.filled(settings('Daily'))).toEqual([]);
    const bound = boundToPage(toolSpecs(), settings('Weekly'), { filled: set.filled(settings('Weekly')) });
    expect(choosable(bound)).not.toContain('select_option');
    expect(choosable(boundToPage(toolSpecs(), settings('Daily')))).toContain('select_option');
  });

  it('leave textboxes out of click_element, filled or empty; a combobox stays', () => {
    const page = `${form('Ada Lovelace', '')}\n[5] combobox "Country" empty`;
    const index = (tools: ReturnType<typeof toolSpecs>, name: string) => (tools.find((t) => t.name === name)!.parameters.properties as Record<string, { enum: number[] }>).index.enum;
    expect(index(boundToPage(toolSpecs(), page), 'click_element')).toEqual([4, 5]);
    expect(index(boundToPage(toolSpecs(), page), 'input_text')).toEqual([1, 2, 3, 5]);
  });

  it('match a value the observation clipped', () => {
    const typed = new SetControls();
    const long = 'a message long enough to be clipped by the observation';
    typed.typedInto(form('', ''), 1, long);
    expect(typed.filled(form(`${long.slice(0, 20)}…`, ''))).toEqual([1]);
    expect(typed.filled(form('another text…', ''))).toEqual([]);
  });

  it('are left out of input_text: the other text fields stay (no textbox is offered to click_element)', () => {
    const page = form('Ada Lovelace', 'ada@example.com');
    const bound = boundToPage(toolSpecs(), page, { filled: [1, 2] });
    const index = (name: string) => (bound.find((t) => t.name === name)!.parameters.properties as any).index;
    expect(index('input_text').enum).toEqual([3]);
    expect(index('click_element').enum).toEqual([4]);
    expect(choosable(boundToPage(toolSpecs(), page, { filled: [1, 2, 3] }))).not.toContain('input_text');
  });

  const boxes = (terms: boolean, offers = false, url = 'http://x/signup') =>
    [`URL: ${url}`, 'Interactive elements:', `[1] checkbox "Send me offers"${offers ? ' checked' : ''}`, `[2] checkbox "I accept the terms"${terms ? ' checked' : ''}`, '[3] button "Continue"'].join('\n');

  it('are the boxes still as the press left them, on that page only; a button is never one', () => {
    const set = new SetControls();
    set.pressed(boxes(false), 2);
    set.pressed(boxes(false), 3);
    expect(set.toggledBoxes(boxes(true))).toEqual([2]);
    // Unticked again by the page: offered again.
    expect(set.toggledBoxes(boxes(false))).toEqual([]);
    expect(set.toggledBoxes(boxes(true, false, 'http://x/other'))).toEqual([]);
    // A box the agent unticked stays unticked.
    set.pressed(boxes(true, true), 1);
    expect(set.toggledBoxes(boxes(true, false))).toEqual([1, 2]);
  });

  it('are left out of click_element only', () => {
    const bound = boundToPage(toolSpecs(), boxes(true), { toggled: [2] });
    const index = (name: string) => (bound.find((t) => t.name === name)!.parameters.properties as any).index;
    expect(index('click_element').enum).toEqual([1, 3]);
    expect(index('scroll').enum).toEqual([1, 2, 3]);
  });
});

const choosable = (tools: ReturnType<typeof toolSpecs>): string[] => ((answerSchema(tools) as any).properties.actions.items.oneOf as any[]).map((c) => c.properties.name.const);
const textOnly = 'URL: http://x/\nTitle: Orders\nTabs: [0] Orders (active)\nInteractive elements:\n(none in the viewport)\nVisible text:\n#4471 9 May Shipped\n(this is the whole page)';

describe('tools that cannot do anything on the page', () => {
  it('are scroll and extract on a page shown whole, send_keys with no element, switch_tab with one tab', () => {
    expect(showsWholePage(textOnly)).toBe(true);
    expect(uselessOn(textOnly).sort()).toEqual(['extract', 'scroll', 'send_keys', 'switch_tab']);
    expect(uselessOn(`${observation}\n(this is the whole page)`)).toEqual(['scroll', 'extract']);
    expect(uselessOn(observation)).toEqual([]);
  });

  it('are left out of the grammar while their description stays as it was, and done is never left out', () => {
    const bound = boundToPage(toolSpecs(), textOnly);
    const off = unavailable(bound, [...uselessOn(textOnly), 'wait', 'done']);
    expect(describeTools(off)).toBe(describeTools(boundToPage(toolSpecs(), observation)));
    expect(choosable(off).sort()).toEqual(['done', 'go_back', 'navigate', 'request_human_input']);
  });
});

describe('page tools spent on an unchanged page', () => {
  it('are those chosen from this same observation, until the page changes or the task starts again', () => {
    const spent = new SpentTools();
    spent.chosen('wait', 'page A');
    spent.chosen('click_element', 'page A');
    spent.chosen('extract', 'page A');
    spent.chosen('navigate', 'page A');
    expect(spent.on('page A').sort()).toEqual(['extract', 'navigate', 'wait']);
    expect(spent.on('page B')).toEqual([]);
    spent.chosen('scroll', 'page B');
    expect(spent.on('page B')).toEqual(['scroll']);
    expect(spent.on('page A')).toEqual([]);
    spent.reset();
    expect(spent.on('page B')).toEqual([]);
  });
});

describe('whether navigate is offered', () => {
  const on = (url: string) => `URL: ${url}\nTitle: Shop\nInteractive elements:\n[1] link "Home"`;
  it('is when the task names an address, or the tab shows no page', () => {
    expect(navigateNeeded('Go to https://shop.example.com and find the price of the kettle.', on('http://127.0.0.1:3000/'))).toBe(true);
    expect(navigateNeeded('Open www.example.org and read the news.', on('http://127.0.0.1:3000/'))).toBe(true);
    expect(navigateNeeded('Find the opening hours on library.example.org.', on('http://127.0.0.1:3000/'))).toBe(true);
    expect(navigateNeeded('Tell me the price of the Gold plan.', on('about:blank'))).toBe(true);
    expect(navigateNeeded('Tell me the price of the Gold plan.', on('chrome-error://chromewebdata/'))).toBe(true);
  });

  it('is not when the task names none (an e-mail address is none) and the tab shows a page', () => {
    expect(navigateNeeded('Tell me the price of the Gold plan. Answer with the price only.', on('http://127.0.0.1:3000/plans'))).toBe(false);
    expect(navigateNeeded('Until when is my membership valid? Log in with sam.kerr@example.com, password Peach-Tree-77.', on('https://gym.test/'))).toBe(false);
    expect(navigateNeeded('Pick size M, e.g. the usual one.', on('https://shop.test/'))).toBe(false);
  });
});
