import { BackAndForth, backAndForthNote } from './back-and-forth';

const page = (url: string, elements: string[], text: string[]) => ['Observation', `URL: ${url}`, 'Title: Results', 'Interactive elements:', ...elements, 'Visible text:', ...text, '(this is the whole page)'].join('\n');
const one = page('http://shop.test/results?q=chair', ['[1] link "Next page"'], ['page 1 of 2', 'Pine Chair: $89']);
const oneAgain = page('http://shop.test/results?q=chair&page=1', ['[1] link "Next page"'], ['page 1 of 2', 'Pine Chair: $89']);
const two = page('http://shop.test/results?q=chair&page=2', ['[1] link "Previous page"'], ['page 2 of 2', 'Oak Rocking Chair: $149']);

describe('BackAndForth', () => {
  it('finds the loop on the second arrival, with what leads back and what the other page showed', () => {
    const pages = new BackAndForth();
    pages.moved(undefined, one, 0);
    pages.moved(one, two, 1);
    pages.moved(two, one, 1);
    expect(pages.loop(one)).toBeUndefined();
    pages.moved(one, two, 1);
    const loop = pages.loop(two)!;
    expect(loop).toEqual({ other: 'http://shop.test/results?q=chair', otherText: 'page 1 of 2 / Pine Chair: $89', otherTitle: 'Results', leadBack: [{ index: 1, label: 'Previous page' }] });
    expect(backAndForthNote(loop)).toBe(
      'Note: this is the second time you came to this page from http://shop.test/results?q=chair, and you went back there in between; "Previous page" [1] only leads back there. That page showed: "page 1 of 2 / Pine Chair: $89". If what the task asks is on one of these two pages, answer from it (call done); if not, go on another way.',
    );
  });

  it('knows a page at a second address by its same text', () => {
    const pages = new BackAndForth();
    pages.moved(undefined, one, 0);
    pages.moved(one, two, 1);
    pages.moved(two, oneAgain, 1);
    pages.moved(oneAgain, two, 1);
    expect(pages.loop(two)?.leadBack).toEqual([{ index: 1, label: 'Previous page' }]);
  });

  it("leaves a browser's error page out: no loop on it, none through it", () => {
    const pages = new BackAndForth();
    const error = page('chrome-error://chromewebdata/', [], ['This site can’t be reached']);
    pages.moved(undefined, one, 0);
    pages.moved(one, error, 0);
    pages.moved(error, one, 0);
    pages.moved(one, error, 0);
    expect(pages.loop(error)).toBeUndefined();
    pages.moved(error, one, 0);
    expect(pages.loop(one)).toBeUndefined();
  });

  it('finds none once the agent went on to a third page, or after a reset', () => {
    const pages = new BackAndForth();
    const three = page('http://shop.test/item', [], ['Oak Rocking Chair', '$149']);
    pages.moved(undefined, one, 0);
    pages.moved(one, two, 1);
    pages.moved(two, one, 1);
    pages.moved(one, three, 1);
    expect(pages.loop(three)).toBeUndefined();
    pages.moved(three, two, 0);
    expect(pages.loop(two)).toBeUndefined();
    pages.reset();
    expect(pages.loop(two)).toBeUndefined();
  });
});
