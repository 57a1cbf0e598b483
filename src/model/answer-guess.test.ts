import { answerSchema, ELEMENT_LABELS, type OfferedTool } from './answer-format';
import { guessNext } from './answer-guess';

const index = { type: 'integer', enum: [2, 4, 7], [ELEMENT_LABELS]: { 2: 'Save', 4: 'Submit', 7: 'Subscribe' } };
const tools: OfferedTool[] = [
  { name: 'done', parameters: { type: 'object', properties: { success: { type: 'boolean' }, message: { type: 'string' } }, required: ['success', 'message'] } },
  { name: 'click_element', parameters: { type: 'object', properties: { index }, required: ['index'] } },
  { name: 'input_text', parameters: { type: 'object', properties: { index, text: { type: 'string' }, clear: { type: 'boolean' } }, required: ['index', 'text'] } },
];
const schema = answerSchema(tools, { thoughtMaxChars: 240, maxActions: 4 });

describe('guessNext', () => {
  it('guesses the keys around the thought before anything is written', () => {
    expect(guessNext(schema, '')).toBe('{"thought": "');
    expect(guessNext(schema, '{"')).toBe('thought": "');
    expect(guessNext(schema, '{"thought":')).toBe(' "');
  });

  it('guesses nothing inside the thought, then the keys up to the tool name', () => {
    expect(guessNext(schema, '{"thought": "I press Sa')).toBe('');
    expect(guessNext(schema, '{"thought": "I press Save.",')).toBe(' "actions": [{"name": "');
    expect(guessNext(schema, '{"thought": "I press Save."')).toBe(', "actions": [{"name": "');
  });

  it('completes a tool name once its start is unique, then its keys', () => {
    expect(guessNext(schema, '{"thought": "x", "actions": [{"name": "c')).toBe('lick_element", "arguments": {"index": "S');
    expect(guessNext(schema, '{"thought": "x", "actions": [{"name": "input')).toBe('_text", "arguments": {"index": "S');
    expect(guessNext(schema, '{"thought": "x", "actions": [{"name": "')).toBe('');
  });

  it("completes an element's label once its start is unique, and guesses the list's end", () => {
    const start = '{"thought": "x", "actions": [{"name": "click_element", "arguments": {"index": "Su';
    expect(guessNext(schema, start)).toBe('b');
    expect(guessNext(schema, `${start}bm`)).toBe('it [4]"}}]}');
    expect(guessNext(schema, `${start}bmit [4]"}}`)).toBe(']}');
  });

  it('guesses the next key after a free value, and nothing in an open choice', () => {
    const typed = '{"thought": "x", "actions": [{"name": "input_text", "arguments": {"index": "Save [2]", "text": "hello"';
    expect(guessNext(schema, typed)).toBe(', "clear": ');
    expect(guessNext(schema, `${typed}, "clear": t`)).toBe('rue}}]}');
    expect(guessNext(schema, `${typed}, "clear": `)).toBe('');
    expect(guessNext(schema, '{"thought": "x", "actions": [{"name": "done", "arguments": {"success": true, "message": "ok"}}, {"name": "')).toBe('');
  });

  it('reads whitespace the grammar allows, and gives up on text that is not the schema', () => {
    expect(guessNext(schema, '{ "thought": "x" ,\n  "actions": [ {"name": "d')).toBe('one", "arguments": {"success": ');
    expect(guessNext(schema, '{"answer": "')).toBe('');
    expect(guessNext(schema, '{"thought": "x", "actions": [{"name": "type')).toBe('');
  });

  it('guesses nothing once the answer is complete', () => {
    expect(guessNext(schema, '{"thought": "x", "actions": [{"name": "click_element", "arguments": {"index": "Save [2]"}}]}')).toBe('');
  });

  it('closes the list at its last allowed item', () => {
    const one = answerSchema(tools, { thoughtMaxChars: 0, maxActions: 1 });
    expect(guessNext(one, '')).toBe('{"actions": [{"name": "');
    expect(guessNext(one, '{"actions": [{"name": "click_element", "arguments": {"index": "Save [2]"')).toBe('}}]}');
  });
});
