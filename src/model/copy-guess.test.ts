import { copyGuess, insideString } from './copy-guess';

const words = (text: string) => text.split(' ');

describe('copyGuess', () => {
  const prompt = words('the page shows Price : $34.90 then Add to cart .');

  it('guesses what followed the answer\'s last tokens where the prompt held them, half as many tokens as the run copied', () => {
    // "page shows Price : $34.90": a run of 5, so 2 tokens guessed
    expect(copyGuess([...prompt, ...words('a page shows Price : $34.90')], { searchEnd: prompt.length })).toEqual(['then', 'Add']);
    // "the page shows Price : $34.90 then Add": a run of 8, so 4
    expect(copyGuess([...prompt, ...words('the page shows Price : $34.90 then Add')], { searchEnd: prompt.length })).toEqual(words('to cart .'));
    expect(copyGuess([...prompt, ...words('the page shows Price : $34.90 then Add')], { searchEnd: prompt.length, maxGuess: 2 })).toEqual(words('to cart'));
  });

  it('guesses nothing when fewer than 4 of the last tokens were written before', () => {
    expect(copyGuess([...prompt, ...words('I see Price : $34.90')], { searchEnd: prompt.length })).toEqual([]);
    expect(copyGuess([...prompt, ...words('I see Price : $34.90')], { searchEnd: prompt.length, minPattern: 2 })).toEqual(['then']);
    expect(copyGuess(words('x y'))).toEqual([]);
  });

  it('guesses from the prompt only, never past its end', () => {
    const answer = words('Add to cart . then Add to cart');
    // the answer's own "then Add to cart" is not searched; the prompt's "then Add to cart" is, and its "." ends the guess
    expect(copyGuess([...prompt, ...answer], { searchEnd: prompt.length, maxGuess: 8 })).toEqual(['.']);
    expect(copyGuess([...prompt, ...words('Add to cart .')], { searchEnd: prompt.length })).toEqual([]);
  });

  it('guesses nothing where the run was followed by different tokens in different places', () => {
    const list = words('Pine Chair : $89 . Oak Chair : $149 .');
    expect(copyGuess([...list, ...words('the Oak Chair : $149')], { searchEnd: list.length, minPattern: 3 })).toEqual(['.']);
    // "Chair :" then "$89" once and "$149" once: no one next
    expect(copyGuess([...list, ...words('a Teak Chair :')], { searchEnd: list.length, minPattern: 2 })).toEqual([]);
    const same = words('b c d one . b c d one . q b c d');
    expect(copyGuess(same, { minPattern: 3, maxGuess: 1 })).toEqual(['one']);
  });
});

describe('insideString', () => {
  it('tells whether the answer so far ends inside a JSON string', () => {
    expect(insideString('{"thought": "I see the ')).toBe(true);
    expect(insideString('{"thought": "I see \\"Save\\" and')).toBe(true);
    expect(insideString('{"thought": "done.", "actions": [{"name": ')).toBe(false);
    expect(insideString('{"thought": "a \\\\", ')).toBe(false);
    expect(insideString('')).toBe(false);
  });
});
