import { REPEAT_STOP_AT, REPEAT_WARN_AT, RepetitionGuard, repetitionNote, PressCounter, pressNote, repeatNote, asksForOne, cartButton, cartButtonNamed, TurnTaking, turnNote } from './repetition';

describe('RepetitionGuard', () => {
  it('warns at the third identical action on an unchanged page and stops at the fifth', () => {
    const guard = new RepetitionGuard();
    const verdicts = Array.from({ length: REPEAT_STOP_AT }, () => guard.note('click_element', { index: 4 }, 'page A').kind);
    expect(REPEAT_WARN_AT).toBe(3);
    expect(verdicts).toEqual(['ok', 'ok', 'warn', 'warn', 'stop']);
  });

  it('starts again when the page changes, the element differs or another action comes between', () => {
    const guard = new RepetitionGuard();
    guard.note('click_element', { index: 4 }, 'page A');
    guard.note('click_element', { index: 4 }, 'page A');
    expect(guard.note('click_element', { index: 4 }, 'page B').kind).toBe('ok');
    expect(guard.note('click_element', { index: 4 }, 'page B').kind).toBe('ok');
    expect(guard.note('click_element', { index: 5 }, 'page B').kind).toBe('ok');
    expect(guard.note('scroll', { direction: 'down' }, 'page B').kind).toBe('ok');
    expect(guard.note('click_element', { index: 5 }, 'page B').kind).toBe('ok');
  });

  it('takes arguments in any key order as the same action', () => {
    const guard = new RepetitionGuard();
    guard.note('input_text', { index: 1, text: 'a' }, 'p');
    guard.note('input_text', { text: 'a', index: 1 }, 'p');
    expect(guard.note('input_text', { index: 1, text: 'a' }, 'p')).toEqual({ kind: 'warn', count: 3 });
  });

  it('names the tool repeated on this page from the third time, for the next answer only while the page is the same', () => {
    const guard = new RepetitionGuard();
    guard.note('extract', { query: 'price' }, 'p');
    guard.note('extract', { query: 'price' }, 'p');
    expect(guard.repeating('p')).toBeUndefined();
    guard.note('extract', { query: 'price' }, 'p');
    expect(guard.repeating('p')).toBe('extract');
    expect(guard.repeating('another page')).toBeUndefined();
    guard.note('done', { message: '$34.90' }, 'p');
    expect(guard.repeating('p')).toBeUndefined();
  });

  it('lets the agent wait on a page that does not change', () => {
    const guard = new RepetitionGuard();
    for (let i = 0; i < 8; i++) expect(guard.note('wait', { seconds: 2 }, 'p').kind).toBe('ok');
  });

  it('tells the model how many repeats remain', () => {
    expect(repetitionNote('click_element', 3)).toMatch(/3 times in a row.*2 more times/);
    expect(repetitionNote('click_element', 4)).toMatch(/1 more time\./);
  });
});

describe('presses of the same element while the page changes', () => {
  it('are counted in a row; another element, another action or an unchanged page starts again', () => {
    const presses = new PressCounter();
    expect(presses.note('click_element', { index: 5 }, 'button "Add to cart"', 'Cart (0)')).toBe(1);
    expect(presses.note('click_element', { index: 5 }, 'button "Add to cart"', 'Cart (1)')).toBe(2);
    expect(presses.note('click_element', { index: 5 }, 'button "Add to cart"', 'Cart (2)')).toBe(3);
    // The same page again: not a press that did something (the repetition guard's case).
    expect(presses.note('click_element', { index: 5 }, 'button "Add to cart"', 'Cart (2)')).toBe(1);
    expect(presses.note('click_element', { index: 6 }, 'button "Checkout"', 'Cart (3)')).toBe(1);
    expect(presses.note('input_text', { index: 6, text: 'x' }, 'textbox "Qty"', 'Cart (4)')).toBe(0);
    expect(presses.note('click_element', { index: 6 }, 'button "Checkout"', 'Cart (5)')).toBe(1);
  });

  it('are named to the model with what the page shows', () => {
    expect(pressNote('button "Add to cart"', 3, 'Cart (3)')).toBe(
      'Note: you pressed "Add to cart" 3 times in a row and the page changed each time; the page shows "Cart (3)". Each press acts again: press it once more only if the task needs one more.',
    );
  });
});

describe('a second press of a button that adds', () => {
  it('is held for buttons and links that add, buy or order, once the page changed', () => {
    expect(repeatNote('[2] button "Add Green Mug to cart"', 2, 'In your cart: Green Mug')).toBe(
      'Not pressed again: you pressed [2] "Add Green Mug to cart" at your last step and the page changed (the page now shows "In your cart: Green Mug"). A second press adds a second one. If the task asks for one, that is done: call done. If it asks for more, press it again after your next step.',
    );
    expect(repeatNote('[5] link "Buy now"', 5, undefined)).toMatch(/^Not pressed again: you pressed \[5\] "Buy now" at your last step and the page changed\. /);
  });

  it('is not held for other presses or other elements (a page that did not change: pressedBefore)', () => {
    expect(repeatNote('[2] button "Next photo"', 2, undefined)).toBeUndefined();
    expect(repeatNote('[2] button "Load more"', 2, undefined)).toBeUndefined();
    expect(repeatNote('[2] checkbox "Add gift wrap"', 2, undefined)).toBeUndefined();
  });
});

describe('cart buttons', () => {
  const page = ['[1] button "Add White Mug to cart"', '[2] button "Add Green Mug to cart"', '[3] button "Add Black Mug to cart"', '[4] link "Checkout"'].map((line, i) => ({ index: i + 1, line }));

  it('are the buttons that add to a cart or buy', () => {
    expect([cartButton('[2] button "Add Green Mug to cart"'), cartButton('  [5] button "Add to basket"'), cartButton('[6] link "Buy now"')]).toEqual(['Add Green Mug to cart', 'Add to basket', 'Buy now']);
    expect([cartButton('[2] button "Add a comment"'), cartButton('[2] checkbox "Add gift wrap to cart"'), cartButton('[2] button "Book table"')]).toEqual([undefined, undefined, undefined]);
  });

  it('is the one the task names by a word of its own, when one is', () => {
    expect(cartButtonNamed('Add the Green Mug to the cart. Add nothing else.', page)).toEqual({ index: 2, label: 'Add Green Mug to cart' });
    expect(cartButtonNamed('Add a mug to the cart.', page)).toBeUndefined();
    expect(cartButtonNamed('Add the green and the black mug.', page)).toBeUndefined();
    expect(cartButtonNamed('Add the Green Mug.', page.slice(1, 2))).toBeUndefined();
  });

  it('are asked for once unless the task counts', () => {
    expect(['Add the Green Mug to the cart. Add nothing else.', 'Buy the $42 plan? No: add the mug dated 12/03.'].map(asksForOne)).toEqual([true, false]);
    expect(['Add 2 Green Mugs.', 'Add three mugs.', 'Add both mugs.', 'Order a pair of socks.'].map(asksForOne)).toEqual([false, false, false, false]);
    expect(asksForOne('Add the mug, size 10:30 on 2026-12-01.')).toBe(true);
  });
});

describe('PressCounter.pressedBefore', () => {
  it('gives the observation the same press was chosen from, once the page changed since', () => {
    const presses = new PressCounter();
    presses.note('click_element', { index: 2 }, 'button "Add to cart"', 'cart empty');
    expect(presses.pressedBefore('click_element', 'button "Add to cart"', 'cart: 1')).toBe('cart empty');
    expect(presses.pressedBefore('click_element', 'button "Add to cart"', 'cart empty')).toBeUndefined();
    expect(presses.pressedBefore('click_element', 'button "Remove"', 'cart: 1')).toBeUndefined();
    presses.note('wait', { seconds: 1 }, '', 'cart: 1');
    expect(presses.pressedBefore('click_element', 'button "Add to cart"', 'cart: 1')).toBeUndefined();
  });
});

describe('two elements pressed in turn', () => {
  it('are found after A, B, A, B on one page, once, and not when another action or page comes between', () => {
    const turns = new TurnTaking();
    for (const element of ['tab "Overview"', 'tab "Reviews"', 'tab "Overview"']) turns.note('click_element', element, 'http://shop.test/orca');
    expect(turns.inTurn()).toBeUndefined();
    turns.note('click_element', 'tab "Reviews"', 'http://shop.test/orca#reviews');
    expect(turns.inTurn()).toEqual(['tab "Overview"', 'tab "Reviews"']);
    expect(turns.inTurn()).toBeUndefined();
    for (const element of ['tab "Overview"', 'tab "Reviews"', 'tab "Overview"']) turns.note('click_element', element, 'http://shop.test/orca');
    turns.note('scroll', '', 'http://shop.test/orca');
    turns.note('click_element', 'tab "Reviews"', 'http://shop.test/orca');
    expect(turns.inTurn()).toBeUndefined();
    for (const [element, url] of [['link "Next"', 'http://shop.test/1'], ['link "Back"', 'http://shop.test/2'], ['link "Next"', 'http://shop.test/1'], ['link "Back"', 'http://shop.test/2']]) turns.note('click_element', element, url);
    expect(turns.inTurn()).toBeUndefined();
  });

  it('are named with the other elements of their role', () => {
    const elements = [
      { index: 1, role: 'link', label: 'Soundhaus', line: '[1] link "Soundhaus"' },
      { index: 3, role: 'tab', label: 'Overview', line: '[3] tab "Overview" selected' },
      { index: 4, role: 'tab', label: 'Specifications', line: '[4] tab "Specifications"' },
      { index: 5, role: 'tab', label: 'Reviews (214)', line: '[5] tab "Reviews (214)"' },
    ];
    expect(turnNote(['tab "Overview"', 'tab "Reviews (214)"'], elements)).toBe(
      'Note: you pressed "Overview" and "Reviews (214)" in turn, twice each; each only shows again what it showed before. Press another: [4] tab "Specifications"; or, if the page showed what the task asks, call done with it.',
    );
    const radios = [
      { index: 1, role: 'radio', label: 'Basic', line: '[1] radio "Basic" checked' },
      { index: 2, role: 'radio', label: 'Standard', line: '[2] radio "Standard"' },
      { index: 3, role: 'radio', label: 'Premium', line: '[3] radio "Premium"' },
    ];
    expect(turnNote(['radio "Standard"', 'radio "Basic"'], radios, { index: 2, label: 'Standard', checked: false }, '[4] "Submit"')).toBe(
      'Note: you pressed "Standard" and "Basic" in turn, twice each; each press undoes the one before. The task names [2] radio "Standard": press it once, then press [4] "Submit".',
    );
    expect(turnNote(['radio "Basic"', 'radio "Standard"'], radios, { index: 2, label: 'Standard', checked: true })).toBe(
      'Note: you pressed "Basic" and "Standard" in turn, twice each; each press undoes the one before. [2] radio "Standard" is chosen now, as the task asks: go on with the rest of the task.',
    );
    expect(turnNote(['link "Next"', 'link "Back"'], elements)).toMatch(/in turn, twice each; each only shows again what it showed before\. Press another: \[1\] link "Soundhaus"; or, if/);
  });
});
