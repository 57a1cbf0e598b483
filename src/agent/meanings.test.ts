import { meantWords } from './meanings';

describe('the words a task means', () => {
  it('are those of the kinds its sentences say without their word', () => {
    expect(meantWords('My parcel came with the box crushed and the vase inside broken.')).toEqual(['damaged', 'damage', 'broken']);
    expect(meantWords("My parcel still hasn't arrived after a week.")).toEqual(['late', 'delayed', 'delay']);
    expect(meantWords('The order never arrived.')).toEqual(['lost', 'missing']);
    expect(meantWords('I was charged twice for one order.')).toEqual(['billing', 'refund', 'refunds']);
    expect(meantWords('Tell me the price of the Gold plan.')).toEqual([]);
  });
});
