import { askedPage, listPage, listPageLeave, listPageNote, listPageObjection, shownPage } from './list-page';

const page = (elements: string[], text: string[] = [], url = 'http://gigs.test/') =>
  [`URL: ${url}`, 'Title: Gigs', 'Tabs: [0] Gigs (active)', 'Interactive elements:', ...elements, 'Visible text:', ...text].join('\n');

const pager = (current: number) => [
  `[3] button "‹ Previous"${current === 1 ? ' disabled' : ''}`,
  ...[1, 2, 3].map((n) => `[${3 + n}] button "${n}"${n === current ? ' current' : ''}`),
  `[7] button "Next ›"${current === 3 ? ' disabled' : ''}`,
];

describe('the page of a list the task names', () => {
  it('reads an ordinal or a number after "page"', () => {
    expect(askedPage('What is the first event on the second page of the list?')).toBe(2);
    expect(askedPage('Which film is on the 3rd page?')).toBe(3);
    expect(askedPage('Open page 4 of the results and read the top title')).toBe(4);
    expect(askedPage('Go to page two and tell me the price')).toBe(2);
    expect(askedPage('What is on the page about refunds?')).toBeUndefined();
    expect(askedPage('Find the cheapest hotel in Lyon')).toBeUndefined();
  });

  it("reads the shown page from the pager's current button, a \"Page N of M\" line, the address, or a disabled previous control", () => {
    expect(shownPage(page(pager(2)))).toBe(2);
    expect(shownPage(page(['[7] link "Next"'], ['Concerts', '12 results, page 3 of 4']))).toBe(3);
    expect(shownPage(page(['[7] link "Next"'], ['Concerts'], 'http://gigs.test/list?page=5'))).toBe(5);
    expect(shownPage(page(['[3] button "Previous" disabled', '[4] button "1"', '[5] button "2"', '[6] button "Next"']))).toBe(1);
    // nothing says which page it is
    expect(shownPage(page(['[4] button "1"', '[5] button "2"', '[6] button "Next"'], ['Concerts']))).toBeUndefined();
    // a button labelled with a number but not of a pager, pressed, is no page
    expect(shownPage(page(['[4] button "Qty 2" pressed'], ['Cart']))).toBeUndefined();
  });

  it('names what to press to reach the asked page: its button, else the next (previous) page control', () => {
    expect(listPage('the events on the third page', page(pager(1)))).toMatchObject({ asked: 3, shown: 1, press: { index: 6, label: '3' } });
    const noNumbers = page(['[3] link "‹ Newer"', '[4] link "Older ›"'], ['Page 2 of 9']);
    expect(listPage('the second page', page(['[4] link "Next page"'], ['Page 1 of 9']))).toMatchObject({ asked: 2, shown: 1, press: { index: 4 } });
    expect(listPage('page 1 of the list', noNumbers)).toMatchObject({ asked: 1, shown: 2, press: { index: 3, label: '‹ Newer' } });
    expect(listPage('the second page', page(pager(2)))).toEqual({ asked: 2, shown: 2, press: undefined });
    expect(listPage('the cheapest item', page(pager(1)))).toBeUndefined();
  });

  it('tells the model its lines are not the answer on another page, and that it is the one on the asked page', () => {
    expect(listPageNote(listPage('Who plays on the second page?', page(pager(1)))!)).toBe(
      'Note: the task asks about page 2 of the list; this is page 1: its lines are not the answer. Press [5] "2" to go to page 2.',
    );
    expect(listPageNote(listPage('Who plays on the second page?', page(pager(2)))!)).toBe('Note: the list shows page 2, the page the task asks about.');
    expect(listPageObjection(listPage('Who plays on the second page?', page(pager(3)))!)).toBe(
      'Not accepted yet: the task asks about page 2 of the list, and this is page 3. Press [5] "2" to go to page 2. If the answer is right as it is, call done again.',
    );
  });
});

describe('a press away from the page of the list the task asks about', () => {
  const task = 'What is the last event on the second page of the list?';
  it('is held for a page number, next or previous while the asked page is shown, and for nothing else', () => {
    expect(listPageLeave(task, page(pager(2)), 6)?.away).toEqual([3, 4, 6, 7]);
    expect(listPageLeave(task, page(pager(2)), 6)?.note).toBe('Not pressed: the list shows page 2, the page the task asks about, and [6] "3" would show another. Answer from this page\'s lines (call done with what the task asks); to show another page anyway, press [6] again.');
    expect(listPageLeave(task, page(pager(2)), 7)?.note).toMatch(/^Not pressed: the list shows page 2, .* \[7\] "Next ›" would show another\./);
    expect(listPageLeave(task, page(pager(2)), 3)?.note).toMatch(/\[3\] "‹ Previous" would show another\./);
    // the asked page's own button, another element, another page shown, or a task naming no page
    expect(listPageLeave(task, page(pager(2)), 5)).toBeUndefined();
    expect(listPageLeave(task, page([...pager(2), '[8] link "Home"']), 8)).toBeUndefined();
    expect(listPageLeave(task, page(pager(3)), 5)).toBeUndefined();
    expect(listPageLeave('What is the last event of the list?', page(pager(2)), 6)).toBeUndefined();
  });
});
