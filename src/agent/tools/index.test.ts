import type { ToolContext } from '../types';
import { AGENT_ACTIONS } from '../../contracts/actions';
import { doneTool } from './done';
import { bestLines, missingNumbers, relevantExcerpt } from './extract';
import { agentTools, toolSpecs } from './index';
import { normalizeUrl } from './navigate';
import { requestHumanInputTool } from './request-human-input';
import { selectOptionTool } from './select-option';

// The browser-free tools never touch the context.
const ctx = {} as ToolContext;

describe('toolSpecs', () => {
  const specs = toolSpecs();
  const spec = (name: string) => specs.find((s) => s.name === name)!.parameters as { properties: Record<string, { description?: string }>; required?: string[] };

  it('offers every action once, each argument described', () => {
    // One tool per agent action of the vocabulary, done first, then the vocabulary's order.
    const vocabulary = Object.keys(AGENT_ACTIONS);
    expect(specs.map((s) => s.name)).toEqual(['done', ...vocabulary.filter((name) => name !== 'done')]);
    expect(new Set(specs.map((s) => s.name))).toEqual(new Set(vocabulary));
    expect(agentTools.map((t) => t.name)).toEqual(specs.map((s) => s.name));
    for (const s of specs) {
      expect(s.description.length).toBeGreaterThan(10);
      expect(s.parameters.type).toBe('object');
      for (const [name, prop] of Object.entries(spec(s.name).properties)) expect([s.name, name, typeof prop.description]).toEqual([s.name, name, 'string']);
    }
  });

  it('makes arguments with defaults optional for the model', () => {
    expect(spec('input_text').required).toEqual(['index', 'text']);
    expect(spec('scroll').required).toEqual(['direction']);
    expect(spec('done').required).toEqual(['message']);
    expect(spec('request_human_input').required).toEqual(['value']);
    expect(spec('select_option').required).toEqual(['index']);
    expect(spec('go_back').properties).toEqual({});
  });

  it('validates and fills in defaults', () => {
    expect(doneTool.schema.parse({ message: 'ok' })).toEqual({ message: 'ok', success: true });
    expect(selectOptionTool.schema.safeParse({ index: 3 }).success).toBe(false);
    expect(agentTools.find((t) => t.name === 'click_element')!.schema.safeParse({ index: 'first' }).success).toBe(false);
    expect(agentTools.find((t) => t.name === 'wait')!.schema.safeParse({ seconds: 60 }).success).toBe(false);
  });
});

describe('done for structured output', () => {
  const done = (params: Parameters<typeof toolSpecs>[0]) => toolSpecs(params).find((s) => s.name === 'done')!.parameters as any;

  it('carries the outputSchema as its result argument, and the CSV columns as its rows', () => {
    const schema = { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { n: { type: 'number' } }, required: ['n'] };
    expect(done({ outputType: 'structured_json', outputSchema: schema }).properties.result).toEqual({ type: 'object', properties: { n: { type: 'number' } }, required: ['n'], description: 'The result of the task' });
    const rows = done({ outputType: 'structured_csv', outputSchema: ['month', 'total'] }).properties.rows;
    expect(rows).toMatchObject({ type: 'array', items: { type: 'object', additionalProperties: false } });
    expect(Object.keys(rows.items.properties)).toEqual(['month', 'total']);
    expect(done({ outputType: 'text' })).toMatchObject({ required: ['message'] });
  });

  it('turns a result value or rows into the message the agent checks', async () => {
    expect((await doneTool.execute(ctx, { result: { n: 1 }, success: true })).done).toEqual({ message: '{"n":1}', success: true });
    expect((await doneTool.execute(ctx, { rows: [{ a: 1 }], success: true })).done).toEqual({ message: '[{"a":1}]', success: true });
    expect((await doneTool.execute(ctx, { message: 'cannot log in', success: false })).done).toEqual({ message: 'cannot log in', success: false });
    expect(doneTool.schema.safeParse({ success: true }).success).toBe(false);
  });
});

describe('done and request_human_input', () => {
  it('end the step with the answer or the question', async () => {
    expect(await doneTool.execute(ctx, { message: 'The answer is 42', success: true })).toEqual({
      summary: 'Task finished',
      target: 'success',
      done: { message: 'The answer is 42', success: true },
    });
    expect(await requestHumanInputTool.execute(ctx, { type: 'two_factor_code', value: 'Enter the code' })).toEqual({
      summary: 'Asked the human (two_factor_code): Enter the code',
      target: 'two_factor_code',
      humanInput: { type: 'two_factor_code', value: 'Enter the code' },
    });
  });
});

describe('normalizeUrl', () => {
  it('adds a missing scheme and refuses other schemes', () => {
    expect(normalizeUrl('example.com/a')).toBe('https://example.com/a');
    expect(normalizeUrl('localhost:3000/x')).toBe('https://localhost:3000/x');
    expect(normalizeUrl(' http://127.0.0.1:8080/hang ')).toBe('http://127.0.0.1:8080/hang');
    expect(normalizeUrl('about:blank')).toBe('about:blank');
    expect(() => normalizeUrl('javascript:alert(1)')).toThrow('Only http and https addresses can be opened, not javascript:');
    expect(() => normalizeUrl('http://')).toThrow('"http://" is not a valid URL');
  });
});

describe('relevantExcerpt', () => {
  it('keeps short pages whole', () => {
    expect(relevantExcerpt(['a', 'b'], 'x')).toEqual({ text: 'a\nb', omitted: 0 });
  });

  it('keeps the lines that match the query, in page order, within the limit', () => {
    const lines = Array.from({ length: 100 }, (_, i) => `Line ${i} filler filler filler`);
    lines[70] = 'The price of the cheapest plan is 5 EUR';
    lines[10] = 'Plans and prices';
    const { text, omitted } = relevantExcerpt(lines, 'cheapest plan price', 200);
    expect(text.length).toBeLessThanOrEqual(200);
    expect(text.indexOf('Plans and prices')).toBeLessThan(text.indexOf('The price of the cheapest plan is 5 EUR'));
    expect(text).toContain('…');
    expect(omitted).toBeGreaterThan(0);
  });
});

describe('bestLines', () => {
  const invoices = Array.from({ length: 30 }, (_, i) => `Invoice #${1001 + i}: €${(100 + i * 13.1).toFixed(2)}`);

  it('are the few lines that share the most words with the query', () => {
    expect(bestLines(['Invoices', ...invoices], 'Invoice #1025: €')).toEqual([invoices[24]]);
  });

  it("come with the line above a person's byline: what they wrote", () => {
    const reviews = ['Customer reviews', 'Nice pouring lips', '★★★★☆ 4 out of 5 · by Paul N.', 'Handle gets far too hot', '★★☆☆☆ 2 out of 5 · by Helga K.', 'Great steaks', '★★★★☆ 4 out of 5 · by Zoe L.'];
    expect(bestLines(reviews, "What was Helga K.'s complaint?")).toEqual(['Handle gets far too hot', '★★☆☆☆ 2 out of 5 · by Helga K.']);
    expect(bestLines(reviews, 'Which review gave 2 stars?')).not.toContain('Handle gets far too hot');
  });

  it('are none when many lines share the top score, no line matches, or the page is short', () => {
    expect(bestLines(invoices, 'invoice amount')).toEqual([]);
    expect(bestLines(invoices, 'delivery time')).toEqual([]);
    expect(bestLines(['About', 'The answer is 42', 'Back home'], 'the answer')).toEqual([]);
  });
});

describe('missingNumbers', () => {
  const loaded = Array.from({ length: 20 }, (_, i) => `Invoice #${1001 + i}: €${(100 + i * 13.1).toFixed(2)}`).join('\n');

  it('are the numbers of the query the text does not hold', () => {
    expect(missingNumbers(loaded, 'the amount of invoice #1025')).toEqual(['#1025']);
    expect(missingNumbers(loaded, 'orders 40213 and 1003')).toEqual(['40213']);
  });

  it('are none when the text holds them, or the query names no number of three digits', () => {
    expect(missingNumbers(loaded, 'the amount of invoice #1012')).toEqual([]);
    expect(missingNumbers(loaded, 'the amount of invoice 12')).toEqual([]);
    expect(missingNumbers(loaded, 'the newest invoice')).toEqual([]);
  });
});
