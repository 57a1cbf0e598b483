import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { toolSpecs } from '../agent/tools';
import { boundToPage } from '../agent/page-bound-tools';
import { answerSchema, describeTools, parseAnswer, toGrammarSchema, toPrompt, type OfferedTool } from './answer-format';

const ROOT = path.resolve(__dirname, '../..');

/** Compiles the grammar with node-llama-cpp (in a plain Node process) and checks answers against it. */
function check(tools: OfferedTool[], answers: unknown[]): { compiled: boolean; error?: string; results: { ok: boolean; error?: string }[] } {
  const input = JSON.stringify({ schema: answerSchema(tools), answers: answers.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))) });
  return JSON.parse(execFileSync(process.execPath, [path.join(ROOT, 'test/support/grammar-check.mjs')], { input, encoding: 'utf8', timeout: 60_000 }));
}

const call = (name: string, args: Record<string, unknown>, thought = 'I see the form and type the name.') => ({ thought, actions: [{ name, arguments: args }] });
const calls = (...list: [string, Record<string, unknown>][]) => ({ thought: 'I fill the form and send it.', actions: list.map(([name, args]) => ({ name, arguments: args })) });

describe('the answer grammar', () => {
  const tools = toolSpecs();
  const structured = toolSpecs({ outputType: 'structured_json', outputSchema: { type: 'object', properties: { price: { type: 'number' }, items: { type: 'array', items: { type: 'string' } } }, required: ['price'] } });

  it("turns every tool's schema into a grammar that accepts its valid calls and refuses invalid ones", () => {
    const valid = [
      call('navigate', { url: 'https://example.com/a' }),
      call('click_element', { index: 3 }),
      call('input_text', { index: 2, text: 'Ada Lovelace', clear: null }),
      call('input_text', { index: 2, text: 'x', clear: false }),
      call('select_option', { index: 4, value: 'Blue', label: null }),
      call('scroll', { direction: 'down', amount: null, index: null }),
      call('send_keys', { keys: 'Enter' }),
      call('switch_tab', { index: 0 }),
      call('go_back', {}),
      call('wait', { seconds: 1.5 }),
      call('extract', { query: 'the price' }),
      call('upload_file', { index: 5, fileIds: ['file_1'] }),
      call('request_human_input', { type: null, value: 'What is the code?' }),
      call('done', { message: 'The title is **Home**', success: true }),
      calls(['input_text', { index: 2, text: 'Ada', clear: null }], ['input_text', { index: 3, text: 'ada@example.com', clear: null }], ['click_element', { index: 4 }]),
    ];
    const invalid = [
      call('click_element', { index: 'three' }), // wrong type
      call('click_element', {}), // a required argument left out
      call('click', { index: 3 }), // no such tool
      call('scroll', { direction: 'sideways', amount: null, index: null }), // not in the enum
      call('navigate', { url: 'https://x', extra: 1 }), // an argument the tool does not have
      { actions: [{ name: 'go_back', arguments: {} }] }, // no thought
      { thought: 'x', actions: [] }, // no action
      calls(['go_back', {}], ['go_back', {}], ['go_back', {}], ['go_back', {}], ['go_back', {}]), // more actions than one answer may list
      call('upload_file', { index: 5, fileIds: [] }), // fewer items than the schema's minimum
      { thought: 'x'.repeat(241), actions: [{ name: 'go_back', arguments: {} }] }, // a thought past its bound
      'I will click the button', // prose
    ];
    const res = check(tools, [...valid, ...invalid]);
    expect(res.compiled).toBe(true);
    res.results.slice(0, valid.length).forEach((r, i) => expect({ i, ...r }).toEqual({ i, ok: true }));
    res.results.slice(valid.length).forEach((r, i) => expect({ i, ok: r.ok }).toEqual({ i, ok: false }));
  });

  it('takes only the indexes the page lists when the tools are bound to it', () => {
    const bound = boundToPage(tools, 'Tabs: [0] Shop (active) | [1] Help\n[3] link "Home"\n[7] button "Buy \\"now\\""\n[9] button');
    const res = check(bound, [
      call('click_element', { index: 'Buy now [7]' }),
      call('click_element', { index: 'button [9]' }),
      call('click_element', { index: 7 }), // a bare number: the element is named by its label first
      call('click_element', { index: 'Home [7]' }), // a label with another's index
      call('click_element', { index: 'Buy now [5]' }),
      call('switch_tab', { index: 1 }),
      call('switch_tab', { index: 2 }),
      call('switch_tab', { index: 0 }), // the active tab
    ]);
    expect(res.compiled).toBe(true);
    expect(res.results.map((r) => r.ok)).toEqual([true, true, false, false, false, true, false, false]);
    // Read back to the index the agent's tool takes; described the same on every page.
    expect(parseAnswer(JSON.stringify(calls(['click_element', { index: 'Buy now [7]' }], ['scroll', { direction: 'down', amount: null, index: 'Home [3]' }])), bound).actions).toEqual([
      { name: 'click_element', arguments: '{"index":7}' },
      { name: 'scroll', arguments: '{"direction":"down","index":3}' },
    ]);
    expect(describeTools(bound)).toContain('- click_element(index: "<label> [index]" (The [index] of the element in the latest observation))');
    expect(describeTools(bound)).toBe(describeTools(boundToPage(tools, 'Tabs: [0] Other (active)\n[1] link "Elsewhere"')));
  });

  it("follows a caller's output schema in done's result", () => {
    const res = check(structured, [
      call('done', { result: { price: 4.5, items: ['a', 'b'] }, success: true, message: null }),
      call('done', { result: { price: 'cheap', items: null }, success: true, message: null }),
      call('done', { result: { items: ['a'] }, success: true, message: null }),
    ]);
    expect(res.compiled).toBe(true);
    expect(res.results.map((r) => r.ok)).toEqual([true, false, false]);
  });

  it('takes a shorter thought, or none, and one action when the shape says so', () => {
    const res = check(tools, []);
    expect(res.compiled).toBe(true);
    const none = answerSchema(tools, { thoughtMaxChars: 0, maxActions: 1 }) as any;
    expect(none.properties.thought).toBeUndefined();
    expect(none.properties.actions.maxItems).toBe(1);
    expect((answerSchema(tools, { thoughtMaxChars: 60 }) as any).properties.thought).toEqual({ type: 'string', maxLength: 60 });
    expect(describeTools(tools, { thoughtMaxChars: 0, maxActions: 1 })).toContain('Answer with one JSON object: {"actions": [{"name": "<tool>", "arguments": {...}}]}. Arguments marked ? may be null.');
    expect(describeTools(tools)).toContain('"thought": "<one short sentence: what you see and what you do next>", "actions"');
  });

  it('keeps bounds llama.cpp can compile and leaves longer ones to max_tokens', () => {
    expect(toGrammarSchema({ type: 'string', maxLength: 100 })).toEqual({ type: 'string', maxLength: 100 });
    expect(toGrammarSchema({ type: 'string', minLength: 1, maxLength: 5000 })).toEqual({ type: 'string', minLength: 1 });
    expect(toGrammarSchema({ type: 'object', properties: { a: { type: 'integer' } } })).toEqual({ type: 'object', properties: { a: { oneOf: [{ type: 'integer' }, { type: 'null' }] } } });
    expect(toGrammarSchema({ anyOf: [{ type: 'string' }, { type: 'number' }] })).toEqual({ oneOf: [{ type: 'string' }, { type: 'number' }] });
    // Any value (z.unknown(), {}): nested to a bounded depth.
    expect(JSON.stringify(toGrammarSchema({})).length).toBeLessThan(2000);
  });
});

describe('parseAnswer', () => {
  const tools: OfferedTool[] = [{ name: 'input_text' }, { name: 'done' }];

  it('gives the call with the nulls of left-out arguments removed, and the thought apart', () => {
    expect(parseAnswer(JSON.stringify(call('input_text', { index: 2, text: 'a', clear: null }, ' I type. ')), tools)).toEqual({ thought: 'I type.', actions: [{ name: 'input_text', arguments: '{"index":2,"text":"a"}' }] });
  });

  it('gives several calls in the order the answer lists them', () => {
    const answer = parseAnswer(JSON.stringify(calls(['input_text', { index: 2, text: 'a' }], ['done', { message: 'ok', success: null }])), tools);
    expect(answer.actions).toEqual([
      { name: 'input_text', arguments: '{"index":2,"text":"a"}' },
      { name: 'done', arguments: '{"message":"ok"}' },
    ]);
  });

  it('refuses an answer naming a tool that was not offered, and text that is not JSON', () => {
    expect(() => parseAnswer(JSON.stringify(call('navigate', { url: 'x' })), tools)).toThrow(/no offered tool/);
    expect(() => parseAnswer('{"thought": "cut off', tools)).toThrow();
    expect(() => parseAnswer('{"thought": "x", "actions": []}', tools)).toThrow(/no action/);
  });
});

describe('toPrompt', () => {
  it('writes the task, the steps so far with their results and the latest observation last, in one user turn', () => {
    const prompt = toPrompt(
      [
        { role: 'system', content: 'You drive a browser.' },
        { role: 'user', content: 'New task: subscribe' },
        { role: 'user', content: 'Observation (step 1) [omitted]' },
        { role: 'assistant', content: 'I type the name.', tool_calls: [{ id: 'c1', function: { name: 'input_text', arguments: '{"index":1,"text":"Ada"}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'Typed "Ada"' },
        { role: 'user', content: 'Note: you repeat yourself.' },
        { role: 'user', content: 'Observation (step 2):\n[1] textbox "Name" value="Ada"' },
        { role: 'assistant', content: '', tool_calls: [{ id: 'c2', function: { name: 'click', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c2', content: 'Invalid call: Unknown tool "click".' },
      ],
      [{ name: 'input_text', description: 'Type into a field', parameters: { type: 'object', properties: { index: { type: 'integer' }, text: { type: 'string' } }, required: ['index', 'text'] } }],
    );
    expect(prompt.map((p) => p.type)).toEqual(['system', 'user']);
    expect(prompt[0]).toMatchObject({ text: expect.stringContaining('- input_text(index: integer; text: string): Type into a field') });
    expect((prompt[1] as { text: string }).text).toBe(
      [
        'New task: subscribe',
        'Steps so far:',
        '1. input_text {"index":1,"text":"Ada"} → Typed "Ada"',
        'Note: you repeat yourself.',
        '2. click {} → Invalid call: Unknown tool "click".',
        'Observation (step 2):\n[1] textbox "Name" value="Ada"',
      ].join('\n'),
    );
  });

  it('lists each call of an answer with several as a step of its own, with its result', () => {
    const prompt = toPrompt(
      [
        { role: 'user', content: 'New task: sign up' },
        { role: 'assistant', content: 'I fill the form.', tool_calls: [{ id: 'a', function: { name: 'input_text', arguments: '{"index":1,"text":"Ada"}' } }, { id: 'b', function: { name: 'click_element', arguments: '{"index":2}' } }] },
        { role: 'tool', tool_call_id: 'a', content: 'Typed "Ada"' },
        { role: 'tool', tool_call_id: 'b', content: 'Clicked' },
      ],
      [],
    );
    expect((prompt[1] as { text: string }).text).toBe(['New task: sign up', 'Steps so far:', '1. input_text {"index":1,"text":"Ada"} → Typed "Ada"', '2. click_element {"index":2} → Clicked'].join('\n'));
  });

  it('keeps what it has already written as the start of the next prompt (the evaluated prefix is reused)', () => {
    const base = [
      { role: 'system', content: 'S' },
      { role: 'user', content: 'New task: t' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'c1', function: { name: 'input_text', arguments: '{"index":1}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'ok' },
    ];
    const one = toPrompt([...base, { role: 'user', content: 'Observation (step 2):\nA' }], []);
    const two = toPrompt([...base, { role: 'user', content: 'Observation (step 2) [omitted]' }, { role: 'assistant', content: '', tool_calls: [{ id: 'c2', function: { name: 'go_back', arguments: '{}' } }] }, { role: 'tool', tool_call_id: 'c2', content: 'back' }, { role: 'user', content: 'Observation (step 3):\nB' }], []);
    const before = (one[1] as { text: string }).text;
    const after = (two[1] as { text: string }).text;
    const stable = before.slice(0, before.indexOf('Observation'));
    expect(after.startsWith(stable)).toBe(true);
  });

  it('marks optional arguments in the tool list', () => {
    expect(describeTools([{ name: 'scroll', parameters: { type: 'object', properties: { direction: { enum: ['up', 'down'] }, amount: { type: 'number' } }, required: ['direction'] } }])).toContain('- scroll(direction: "up"|"down"; amount?: number)');
  });
});
