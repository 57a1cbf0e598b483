import { revealedAnswerNote } from './revealed-answer';

const page = (phone: string) =>
  ['URL: http://swapsy.test/ad', 'Interactive elements:', '[1] link "Swapsy"', '[2] button "Show phone number"', 'Visible text:', 'Gravel bike, 54 cm', '€640', `Phone: ${phone}`, 'Call our help desk on 030 760 1200'].join('\n');
const task = "What's the phone number of the person selling this bike?";

describe('text the last actions made appear, answering a question', () => {
  it('is named with the way to answer', () => {
    expect(revealedAnswerNote(task, page('06 •• •• •• ••'), page('06 4817 2093'))).toBe('Note: your last action made the page show "Phone: 06 4817 2093". If that answers the task, call done with it.');
  });

  it('is not named for a task that asks nothing, text that was there, or text without the task\'s words or a figure', () => {
    expect(revealedAnswerNote('Call the seller of this bike for me', page('06 •• •• •• ••'), page('06 4817 2093'))).toBeUndefined();
    expect(revealedAnswerNote(task, page('06 4817 2093'), page('06 4817 2093'))).toBeUndefined();
    expect(revealedAnswerNote(task, page('06 •• •• •• ••'), page('06 •• •• •• ••').replace('€640', '€600'))).toBeUndefined();
    expect(revealedAnswerNote(task, page('06 •• •• •• ••'), page('06 •• •• •• ••').replace('€640', 'Phone: unknown'))).toBeUndefined();
  });

  it('is not named when more than two lines appeared (a new page, not an answer shown)', () => {
    const many = `${page('06 4817 2093')}\nPhone hours: 9 to 17\nPhone lines: 3`;
    expect(revealedAnswerNote(task, page('06 •• •• •• ••'), many)).toBeUndefined();
  });
});
