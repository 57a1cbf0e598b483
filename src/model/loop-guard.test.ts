import { endsInLoop, loopWatch } from './loop-guard';

describe('endsInLoop', () => {
  const sentence = 'The task is not a valid task as the page does not show any information about invoice #1025. ';

  it('finds a sentence said over and over', () => {
    expect(endsInLoop(`{"thought": "I looked.", "actions": [{"name": "done", "arguments": {"message": "${sentence.repeat(5)}`)).toBe(true);
    // Cut anywhere inside the period, the end still repeats.
    expect(endsInLoop(sentence.repeat(5) + sentence.slice(0, 17))).toBe(true);
  });

  it('finds a short piece repeated', () => {
    expect(endsInLoop('Answer: ' + 'ha, '.repeat(20) + 'ha, ha, ha, ha, ha, ha, ha, ha, ' + 'no no no no '.repeat(30))).toBe(true);
  });

  it('leaves text that only repeats briefly or not at the end', () => {
    expect(endsInLoop(sentence.repeat(2))).toBe(false);
    expect(endsInLoop(sentence.repeat(5) + 'Then the amount of invoice #1025 is €512.40, read from the list after it loaded.')).toBe(false);
    const rows = Array.from({ length: 40 }, (_, i) => `{"invoice": "#${1001 + i}", "amount": ${(100 + i * 3.7).toFixed(2)}}`).join(', ');
    expect(endsInLoop(`{"rows": [${rows}`)).toBe(false);
    expect(endsInLoop('short')).toBe(false);
  });
});

describe('loopWatch', () => {
  it('says so once the streamed text ends in a loop, and keeps saying so', () => {
    const watch = loopWatch();
    const chunks = ('{"thought": "Reading the list.", "actions": [' + 'the same words again, '.repeat(30)).match(/.{1,4}/gs)!;
    const at = chunks.findIndex((chunk) => watch.add(chunk));
    expect(at).toBeGreaterThan(0);
    // Stopped within a few periods of the loop's start, long before all of it.
    expect(chunks.slice(0, at + 1).join('').length).toBeLessThan(48 + 22 * 18);
    expect(watch.looped).toBe(true);
    expect(watch.add('anything')).toBe(true);
  });

  it('never fires on an ordinary answer', () => {
    const watch = loopWatch();
    const answer = '{"thought": "The form is filled; the button [4] sends it.", "actions": [{"name": "click_element", "arguments": {"index": 4}}]}';
    expect(answer.match(/.{1,3}/gs)!.some((chunk) => watch.add(chunk))).toBe(false);
  });
});
