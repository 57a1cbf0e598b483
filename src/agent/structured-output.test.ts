import { checkStructuredOutput, closeSchemaWorkers, outputSchemaProblem, parseCsv, validateAgainstSchema, writeCsv } from './structured-output';
import { csvColumnsProblem, MAX_SCHEMA_BYTES, outputSchemaLimitProblem } from '../contracts/output-schema';

afterAll(() => closeSchemaWorkers());

const invoiceSchema = {
  type: 'object',
  properties: {
    invoices: {
      type: 'array',
      items: {
        type: 'object',
        properties: { number: { type: 'string' }, total: { type: 'number' }, paid: { type: 'boolean' } },
        required: ['number', 'total'],
        additionalProperties: false,
      },
    },
    count: { type: 'integer' },
  },
  required: ['invoices'],
};

const json = (message: string) => checkStructuredOutput({ outputType: 'structured_json', outputSchema: invoiceSchema }, message);
const csv = (message: string, columns = ['month', 'total']) => checkStructuredOutput({ outputType: 'structured_csv', outputSchema: columns }, message);

describe('structured_json output', () => {
  it('accepts a matching document and returns it as compact JSON', async () => {
    const res = await json('{ "invoices": [ {"number": "A-1", "total": 12.5, "paid": true} ], "count": 1 }');
    expect(res).toEqual({ ok: true, value: '{"invoices":[{"number":"A-1","total":12.5,"paid":true}],"count":1}' });
  });

  it('accepts the document inside a code fence', async () => {
    expect(await json('```json\n{"invoices": []}\n```')).toEqual({ ok: true, value: '{"invoices":[]}' });
  });

  it('refuses text that is not JSON, saying so', async () => {
    const res = await json('Here are the invoices: A-1');
    expect(res.ok).toBe(false);
    expect(!res.ok && res.error).toMatch(/^The output is not valid JSON/);
  });

  it('names every mismatch with its path', async () => {
    const res = await json('{"invoices": [{"number": 7, "total": "12"}, {"total": 3, "extra": 1}], "count": 1.5}');
    expect(res.ok).toBe(false);
    const error = !res.ok ? res.error : '';
    expect(error).toContain('$.invoices[0].number: must be string');
    expect(error).toContain('$.invoices[0].total: must be number');
    expect(error).toContain('$.invoices[1]: missing required property "number"');
    expect(error).toContain('$.invoices[1]: property "extra" is not allowed');
    expect(error).toContain('$.count: must be integer');
  });

  it('reports a missing top-level property', async () => {
    expect(await json('{}')).toEqual({ ok: false, error: 'The output does not match the JSON Schema: $: missing required property "invoices"' });
  });

  it('passes text output through unchanged', async () => {
    expect(await checkStructuredOutput({ outputType: 'text' }, ' *markdown* ')).toEqual({ ok: true, value: ' *markdown* ' });
  });
});

describe('JSON Schema validation (ajv)', () => {
  it.each([
    [{ type: 'string' }, 'x', []],
    [{ type: 'string' }, 1, ['$: must be string']],
    [{ type: 'number' }, 3, []],
    [{ type: 'integer' }, 3.5, ['$: must be integer']],
    [{ type: 'boolean' }, 'true', ['$: must be boolean']],
    [{ type: 'array', items: { type: 'number' } }, [1, 'a'], ['$[1]: must be number']],
    [{ type: ['string', 'null'] }, null, []],
    [{ enum: ['a', 'b'] }, 'c', ['$: must be one of "a", "b"']],
    [{ type: 'string', minLength: 2, maxLength: 3 }, 'abcd', ['$: must NOT have more than 3 characters']],
    [{ type: 'string', pattern: '^\\d+$' }, '12a', ['$: must match pattern "^\\d+$"']],
    [{ type: 'number', minimum: 0, maximum: 10 }, -1, ['$: must be >= 0']],
    [{ type: 'array', minItems: 1 }, [], ['$: must NOT have fewer than 1 items']],
    [{ type: 'object', additionalProperties: { type: 'number' } }, { a: 1, b: 'x' }, ['$.b: must be number']],
    [{ anyOf: [{ type: 'string' }, { type: 'number' }] }, 'x', []],
    [{ type: 'string', format: 'date' }, '2026-13-45', ['$: must match format "date"']],
    [{ type: 'object', properties: { 'a b': { type: 'string' } } }, { 'a b': 1 }, ['$["a b"]: must be string']],
    [{ type: 'object', properties: { a: { type: 'string' } } }, { a: 'x', b: 2 }, []],
  ])('%j against %j', async (schema, value, errors) => {
    expect(await validateAgainstSchema(schema, value)).toEqual(errors);
  });

  it.each([
    [invoiceSchema, null],
    [{ type: 'object', properties: { a: { type: 'date' } } }, expect.stringMatching(/^outputSchema is not a valid JSON Schema: outputSchema.properties.a.type must be equal to one of the allowed values$/)],
    [{ anyOf: [{ type: 'string' }] }, null],
    [{ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'string' }, null],
    [{ type: 'object', required: 'a' }, expect.stringMatching(/^outputSchema is not a valid JSON Schema: outputSchema.required must be array$/)],
    [{ type: 'string', pattern: '(' }, expect.stringMatching(/^outputSchema cannot be used: a pattern is not supported \(error parsing regexp: missing closing \): `\(`\)/)],
    [{ type: 'string', pattern: '^(?=a)' }, expect.stringMatching(/^outputSchema cannot be used: a pattern is not supported .*without look-around or back-references$/)],
    [{ type: 'object', patternProperties: { '(a)\\1': { type: 'number' } } }, expect.stringMatching(/^outputSchema cannot be used: a pattern is not supported/)],
    [{ $ref: 'https://example.com/schema.json' }, expect.stringMatching(/^outputSchema cannot be used: can't resolve reference/)],
    [['a', 'b'], 'outputSchema must be a JSON Schema object'],
  ])('schema %j: %s', async (schema, problem) => {
    expect(await outputSchemaProblem(schema)).toEqual(problem);
  });

  it('checks CSV column lists', () => {
    expect(csvColumnsProblem(['a', 'b'])).toBeNull();
    expect(csvColumnsProblem([])).toBe('outputSchema must be a non-empty array of column names');
    expect(csvColumnsProblem(['a', 'a'])).toBe('outputSchema column names must be unique');
    expect(csvColumnsProblem(['a', ''])).toBe('outputSchema column names must be non-empty strings');
  });
});

describe('structured_csv output', () => {
  it('accepts CSV whose header row is exactly the columns, normalised to RFC 4180', async () => {
    expect(await csv('month,total\n2026-10,1234.50\n2026-11,"1,000.00"\n')).toEqual({ ok: true, value: 'month,total\r\n2026-10,1234.50\r\n2026-11,"1,000.00"\r\n' });
  });

  it('refuses another header row', async () => {
    expect(await csv('Month,Total\n2026-10,1')).toEqual({ ok: false, error: 'The first CSV row must be exactly these columns: month,total (got: Month,Total)' });
    expect(await csv('month\n2026-10')).toMatchObject({ ok: false });
  });

  it('refuses rows with the wrong number of fields', async () => {
    expect(await csv('month,total\n2026-10,1,extra')).toEqual({ ok: false, error: 'CSV row 2 has 3 fields; every row needs 2' });
  });

  it('writes JSON rows as CSV with quoting', async () => {
    const res = await csv('[{"month": "2026-10", "total": 1234.5}, {"month": "Oct, \\"late\\"", "total": null}]');
    expect(res).toEqual({ ok: true, value: 'month,total\r\n2026-10,1234.5\r\n"Oct, ""late""",\r\n' });
  });

  it('refuses JSON rows with unknown columns', async () => {
    expect(await csv('[{"month": "x", "sum": 1}]')).toEqual({ ok: false, error: 'The rows do not fit the columns month, total: row 1 has unknown column sum' });
  });

  it('parses and writes RFC 4180 round trip', () => {
    const rows = [['a', 'b,c'], ['line\nbreak', 'quote "q"'], ['', ' x']];
    const text = writeCsv(rows);
    expect(parseCsv(text)).toEqual({ ok: true, rows });
    expect(parseCsv('"open,1')).toEqual({ ok: false, error: 'a quoted field is not closed' });
  });

  it('writes CRLF lines, quoting fields with commas, quotes, line breaks or edge blanks', () => {
    expect(writeCsv([['a', 'b,c', 'q"x'], ['line\nbreak', ' lead', 'trail ', 'cr\r'], ['', 'x', '']])).toBe(
      'a,"b,c","q""x"\r\n"line\nbreak"," lead","trail ","cr\r"\r\n,x,\r\n',
    );
  });
});

describe('outputSchema bounds', () => {
  const wide = (n: number) => ({ type: 'object', properties: Object.fromEntries(Array.from({ length: n }, (_, i) => [`field_${i}`, { type: 'string' }])) });

  it('refuses a schema over 64 KB serialized, counting UTF-8 bytes', async () => {
    const big = { type: 'string', description: 'x'.repeat(MAX_SCHEMA_BYTES) };
    expect(outputSchemaLimitProblem(big)).toMatch(/^outputSchema is larger than 64 KB \(\d+ bytes serialized\)$/);
    expect(await outputSchemaProblem(big)).toMatch(/^outputSchema is larger than 64 KB/);
    // 30,000 two-byte characters: under 64 K characters, over 64 KB
    expect(outputSchemaLimitProblem({ type: 'string', description: 'é'.repeat(33_000) })).toMatch(/larger than 64 KB/);
    expect(outputSchemaLimitProblem({ type: 'string', description: 'x'.repeat(60_000) })).toBeNull();
  });

  it('refuses a schema nested deeper than 64 levels without overflowing the stack', () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 5000; i++) deep = { items: deep };
    expect(outputSchemaLimitProblem(deep)).toBe('outputSchema is nested deeper than 64 levels');
  });

  it('accepts a 1,000-property schema (compiled on a schema thread)', async () => {
    expect(await outputSchemaProblem(wide(1000))).toBeNull();
    expect(await validateAgainstSchema(wide(1000), { field_999: 1 })).toEqual(['$.field_999: must be string']);
  });

  it('runs patterns on RE2: a catastrophic pattern on a long value is answered at once', async () => {
    const schema = { type: 'object', properties: { code: { type: 'string', pattern: '^(a+)+$' } }, patternProperties: { '^(x+)+$': { type: 'number' } } };
    expect(await outputSchemaProblem(schema)).toBeNull();
    const evil = `${'a'.repeat(50_000)}b`;
    const res = await checkStructuredOutput({ outputType: 'structured_json', outputSchema: schema }, JSON.stringify({ code: evil, [`${'x'.repeat(50_000)}y`]: 'not checked' }));
    expect(res).toEqual({ ok: false, error: 'The output does not match the JSON Schema: $.code: must match pattern "^(a+)+$"' });
    expect(await checkStructuredOutput({ outputType: 'structured_json', outputSchema: schema }, JSON.stringify({ code: 'aaaa', xxx: 1 }))).toEqual({ ok: true, value: '{"code":"aaaa","xxx":1}' });
    expect(await validateAgainstSchema(schema, { xxx: 'one' })).toEqual(['$.xxx: must be number']);
  });
});
