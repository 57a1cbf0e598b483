import { giveUpNote, likeliestElement } from './give-up';

const branches = ['Interactive elements:', '[1] link "Home"', '[2] link "Join the library"', '[3] link "Central Library"', '[4] link "Riverside Library"', '[5] button "Search" disabled', 'Visible text:', 'Our branches'].join('\n');
const task = 'What time does the Riverside library open on Sundays?';

describe('an early give-up', () => {
  it('is answered with the link or button that shares the most words with the task', () => {
    expect(likeliestElement(task, branches)).toEqual({ index: 4, role: 'link', label: 'Riverside Library' });
    expect(giveUpNote(task, branches, 2)).toBe(
      'Not ended yet: you gave up after 2 steps. [4] link "Riverside Library" has words of the task: it may lead to what the task asks. Try that first; if the task cannot be done, call done with success=false again.',
    );
  });

  it("is answered with the page's lines that show what the task asks about, when given", () => {
    expect(giveUpNote(task, branches, 0, '"Sunday | 13:00–17:00"')).toBe(
      'Not ended yet: you gave up before any action, but the page\'s whole text (below what is in view too) shows "Sunday | 13:00–17:00". If that answers the task, call done with it and success=true; if the task cannot be done, call done with success=false again.',
    );
  });

  it('names no element when none shares a word, or only a disabled one does', () => {
    expect(likeliestElement('Who won the cup in 1998?', branches)).toBeUndefined();
    expect(likeliestElement('Search for Dune.', branches)).toBeUndefined();
    expect(giveUpNote('Who won the cup in 1998?', branches, 0)).toBe(
      'Not ended yet: you gave up before any action. A link or button, a scroll or a search may lead to what the task asks. Try that first; if the task cannot be done, call done with success=false again.',
    );
  });
});
