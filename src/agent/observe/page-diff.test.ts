import { changeSummary, elementName, hasState, nothingVisible, pageChange, pageWithoutPlace } from './page-diff';

const page = (over: { url?: string; title?: string; tabs?: string; modal?: string; elements?: string[]; text?: string[] } = {}) =>
  [
    `URL: ${over.url ?? 'http://shop.test/form'}`,
    `Title: ${over.title ?? 'Sign up'}`,
    `Tabs: ${over.tabs ?? '[0] Sign up (active)'}`,
    ...(over.modal ? [`A modal dialog is open ("${over.modal}"): only its elements are listed; 3 elements behind it cannot be used until it is closed.`] : []),
    'Interactive elements:',
    ...(over.elements ?? ['[1] textbox "Name" empty', '[2] textbox "Email" empty', '[3] button "Send"']),
    'Visible text:',
    ...(over.text ?? ['Sign up', 'Name', 'Email']),
  ].join('\n');

describe('the change summary', () => {
  it('says the value an acted field now holds', () => {
    const after = page({ elements: ['[1] textbox "Name" value="Ada"', '[2] textbox "Email" empty', '[3] button "Send"'] });
    expect(changeSummary(page(), after, [1])).toBe('Changed: [1] now holds "Ada"');
  });

  it('says the value a field holds after an action on another element (an option of its list chosen), two such fields at most', () => {
    const before = page({ elements: ['[1] combobox "Home city" value="Zarag" expanded', '[4] option "Zaragoza, Aragon, Spain"', '[3] button "Save"'] });
    const after = page({ elements: ['[1] combobox "Home city" value="Zaragoza, Aragon, Spain" collapsed', '[3] button "Save"'] });
    expect(changeSummary(before, after, [4])).toBe('Changed: [4] went away; [1] now holds "Zaragoza, Aragon, Spain"; [1] "Home city" is now collapsed');
    const three = (v: string) => page({ elements: [`[1] textbox "A" value="${v}"`, `[2] textbox "B" value="${v}"`, `[3] textbox "C" value="${v}"`, '[4] button "Copy"'] });
    expect(changeSummary(three('x'), three('y'), [4])).toBe('Changed: [1] now holds "y"; [2] now holds "y"');
  });

  it("names the options a list shows after the actions (a combobox's suggestions), a few at most", () => {
    const before = page({ elements: ['[1] combobox "From" value="Leeds" collapsed', '[2] combobox "To" empty collapsed', '[3] button "Find trains"'] });
    const after = page({ elements: ['[1] combobox "From" value="Leeds" collapsed', '[2] combobox "To" value="York" expanded', '[5] option "York (YRK)"', '[3] button "Find trains"'] });
    expect(changeSummary(before, after, [2])).toBe('Changed: [2] now holds "York"; [2] "To" is now expanded; option appeared to choose from: [5] "York (YRK)" (press the one you mean)');
    const many = page({ elements: ['[1] combobox "From" value="Le" expanded', ...[4, 5, 6, 7, 8, 9].map((i) => `[${i}] option "Station ${i}"`)] });
    expect(changeSummary(before, many, [1])).toContain('options appeared to choose from: [4] "Station 4", [5] "Station 5", [6] "Station 6", [7] "Station 7" and 2 more (press the one you mean)');
  });

  it('says the address and title of a new page', () => {
    const after = page({ url: 'http://shop.test/thanks', title: 'Thanks', elements: [], text: ['Thank you'] });
    expect(changeSummary(page(), after, [3])).toBe('Changed: URL is now http://shop.test/thanks; title is now "Thanks"');
  });

  it('says a jump to a place on the same page (only the #part changed) is one, and whether anything visible changed', () => {
    const bakery = (url: string, text = ['Bread Small Large', 'Sourdough €3.20 €5.40']) => page({ url, elements: ['[1] link "Breads"'], text });
    expect(changeSummary(bakery('http://bakery.test/index.html'), bakery('http://bakery.test/index.html#breads'), [1])).toBe(
      'Changed: only the URL\'s #part is now #breads (a place on this same page); nothing visible changed',
    );
    expect(changeSummary(bakery('http://bakery.test/index.html#breads'), bakery('http://bakery.test/index.html#cakes', ['Carrot cake €3.40']), [1])).toBe(
      'Changed: only the URL\'s #part is now #cakes (a place on this same page); text appeared: "Carrot cake €3.40"; text went away: "Bread Small Large", "Sourdough €3.20 €5.40"',
    );
    // back to the page's top: the #part went away
    const home = changeSummary(bakery('http://bakery.test/index.html#breads'), bakery('http://bakery.test/index.html'), [1]);
    expect(home).toBe("Changed: only the URL's #part went away (the same page); nothing visible changed");
    expect(nothingVisible(home)).toBe(true);
    expect(nothingVisible(changeSummary(bakery('http://bakery.test/index.html'), bakery('http://bakery.test/index.html#breads'), [1]))).toBe(true);
    expect(nothingVisible(changeSummary(bakery('http://bakery.test/index.html#breads'), bakery('http://bakery.test/index.html#cakes', ['Carrot cake €3.40']), [1]))).toBe(false);
    expect(nothingVisible('Changed: nothing visible changed')).toBe(true);
    expect(nothingVisible('Changed: URL is now http://bakery.test/cakes.html')).toBe(false);
    // the same page at two of its places, another page not
    expect(pageWithoutPlace(bakery('http://bakery.test/index.html#breads'))).toBe(bakery('http://bakery.test/index.html'));
    expect(pageWithoutPlace(bakery('http://bakery.test/cakes.html'))).not.toBe(bakery('http://bakery.test/index.html'));
    // another page's address is said whole
    expect(changeSummary(bakery('http://bakery.test/index.html#breads'), bakery('http://bakery.test/cakes.html#top'), [1])).toBe('Changed: URL is now http://bakery.test/cakes.html#top');
  });

  it('says which text appeared and went away, a few lines at most', () => {
    const after = page({ text: ['Sign up', 'Name', 'Name is required', 'Email', 'Email is required', 'Try again'] });
    expect(changeSummary(page(), after, [3])).toBe('Changed: text appeared: "Name is required", "Email is required" and 1 more line');
    expect(changeSummary(page({ text: ['Cart (1)'] }), page({ text: ['Cart (2)'] }), [3])).toBe('Changed: text appeared: "Cart (2)"; text went away: "Cart (1)"');
  });

  it('says which elements changed state: the acted radio now checked first, the one before no longer', () => {
    const radios = (checked: number) => ['[1] radio "Basic"', '[2] radio "Standard"', '[3] radio "Premium"'].map((line, i) => (i + 1 === checked ? `${line} checked` : line));
    expect(changeSummary(page({ elements: radios(1) }), page({ elements: radios(2) }), [2])).toBe('Changed: [2] "Standard" is now checked; [1] "Basic" is no longer checked');
    const terms = (state: string) => page({ elements: [`[2] checkbox "I accept the terms"${state}`] });
    expect(changeSummary(terms(''), terms(' checked'), [2])).toBe('Changed: [2] "I accept the terms" is now checked (pressing it again undoes this)');
    expect(changeSummary(terms(' checked'), terms(''), [2])).toBe('Changed: [2] "I accept the terms" is no longer checked (pressing it again undoes this)');
    expect(changeSummary(terms(''), terms(' checked'), [])).toBe('Changed: [2] "I accept the terms" is now checked');
    // a box that says it is unticked
    expect(changeSummary(terms(' checked'), terms(' unchecked'), [2])).toBe('Changed: [2] "I accept the terms" is no longer checked (pressing it again undoes this)');
    expect(changeSummary(terms(' unchecked'), terms(' checked'), [2])).toBe('Changed: [2] "I accept the terms" is now checked (pressing it again undoes this)');
    const menu = (state: string) => page({ elements: [`[4] button "Menu" ${state}`, '[5] checkbox "Terms" required'] });
    expect(changeSummary(menu('collapsed'), menu('expanded'), [4])).toBe('Changed: [4] "Menu" is now expanded');
    // (a value's own words are not states)
    const field = (value: string) => page({ elements: [`[1] textbox "Note" value="${value}"`] });
    expect(changeSummary(field('a'), field('checked'), [1])).toBe('Changed: [1] now holds "checked"');
  });

  it('says a dialog opened, and when nothing visible changed', () => {
    expect(changeSummary(page(), page({ modal: 'Confirm' }), [3])).toBe('Changed: a dialog opened ("Confirm")');
    expect(changeSummary(page(), page(), [3])).toBe('Changed: nothing visible changed');
  });
});

describe('a page changed beyond the elements acted on', () => {
  it('is not changed by the values of the acted fields, nor by their state hints', () => {
    const after = page({ elements: ['[1] textbox "Name" value="Ada" required', '[2] textbox "Email" empty', '[3] button "Send"'], text: ['Sign up', 'Name', 'Email', 'Looks good'] });
    expect(pageChange(page(), after, [1])).toBeUndefined();
  });

  it('is not changed by an open list closing on the option chosen, its field showing the choice', () => {
    const open = page({ elements: ['[1] combobox "Priority Normal" value="Normal"', '[3] option "Low"', '[4] option "Normal"', '[5] option "High"', '[2] button "Save ticket"'] });
    const closed = page({ elements: ['[1] combobox "Priority High" value="High"', '[2] button "Save ticket"'] });
    expect(pageChange(open, closed, [5])).toBeUndefined();
    // another element gone, or the list closed by a press of no option: changed
    expect(pageChange(open, page({ elements: ['[1] combobox "Priority High" value="High"'] }), [5])).toBe('1 element went away');
    expect(pageChange(open, closed, [2])).toBe('1 element appeared and 4 elements went away');
  });

  it('is changed by elements that appeared or went away, another address, a new tab or a dialog', () => {
    expect(pageChange(page(), page({ elements: ['[1] textbox "Name" value="A"', '[4] textbox "Company" empty', '[2] textbox "Email" empty', '[3] button "Send"'] }), [1])).toBe('1 element appeared');
    expect(pageChange(page(), page({ elements: ['[1] textbox "Name" value="A"'] }), [1])).toBe('2 elements went away');
    expect(pageChange(page(), page({ url: 'http://shop.test/next' }), [1])).toBe('the address changed to http://shop.test/next');
    expect(pageChange(page(), page({ tabs: '[0] Sign up | [1] Offer (active)' }), [1])).toBe('a new tab opened');
    expect(pageChange(page(), page({ modal: 'Cookies' }), [1])).toBe('a dialog opened ("Cookies")');
  });
});

describe("an element line's name and states", () => {
  it('names an element by its role and label, without its index or state hints', () => {
    expect(elementName('[12] button "Add to cart" pressed')).toBe('button "Add to cart"');
    expect(elementName('[3] textbox "Say \\"hi\\"" value="x"')).toBe('textbox "Say \\"hi\\""');
  });

  it('reads a state from the hints only, never from the label or a value', () => {
    expect(hasState('[4] radio "Express" checked', ['checked', 'selected'])).toBe(true);
    expect(hasState('[4] option "M" selected', ['checked', 'selected'])).toBe(true);
    expect(hasState('[4] radio "Checked baggage"', ['checked'])).toBe(false);
    expect(hasState('[4] textbox "Note" value="selected items"', ['selected'])).toBe(false);
    expect(hasState('[4] button "L" pressed', ['checked', 'selected'])).toBe(false);
    expect(hasState('[4] checkbox "Gift" unchecked', ['checked'])).toBe(false);
  });
});
