/**
 * Structured task output: the agent's `done` message checked against what the caller
 * asked for before the task may complete.
 *  - `structured_json`: the message must be JSON matching `outputSchema`, a JSON Schema of
 *    the supported subset (type string/number/integer/boolean/object/array/null,
 *    properties, required, items, additionalProperties, enum and the simple bounds).
 *  - `structured_csv`: `outputSchema` is the column list. The model may answer CSV whose
 *    header row is exactly those columns, or JSON rows (objects with those columns), which
 *    are written out as CSV here (RFC 4180: CRLF, quotes doubled).
 * On failure the error says what is wrong in words the model can act on.
 */
import type { TaskParams } from '../workflows/types';

export type StructuredCheck = { ok: true; value: string } | { ok: false; error: string };

const MAX_REPORTED_ERRORS = 10;
const MAX_SCHEMA_DEPTH = 32;

export function checkStructuredOutput(params: Pick<TaskParams, 'outputType' | 'outputSchema'>, message: string): StructuredCheck {
  switch (params.outputType) {
    case 'structured_json':
      return checkJson(params.outputSchema, message);
    case 'structured_csv':
      return checkCsv(Array.isArray(params.outputSchema) ? params.outputSchema.map(String) : [], message);
    default:
      return { ok: true, value: message };
  }
}

// ---- JSON ----------------------------------------------------------------------------

function checkJson(schema: unknown, message: string): StructuredCheck {
  const parsed = parseJsonText(message);
  if (!parsed.ok) return { ok: false, error: `The output is not valid JSON (${parsed.error}). Answer with only the JSON document.` };
  const errors = validateAgainstSchema(schema, parsed.value);
  if (errors.length) return { ok: false, error: `The output does not match the JSON Schema: ${formatErrors(errors)}` };
  return { ok: true, value: JSON.stringify(parsed.value) };
}

/** JSON, tolerating the code fence models like to put around it. */
function parseJsonText(message: string): { ok: true; value: unknown } | { ok: false; error: string } {
  const text = stripFence(message);
  if (!text) return { ok: false, error: 'the message is empty' };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
}

function stripFence(message: string): string {
  const text = message.trim().replace(/^\uFEFF/, '');
  const fenced = /^```[a-zA-Z0-9_-]*\s*\n([\s\S]*?)\n?```$/.exec(text);
  return (fenced ? fenced[1] : text).trim();
}

function formatErrors(errors: string[]): string {
  const shown = errors.slice(0, MAX_REPORTED_ERRORS).join('; ');
  return errors.length > MAX_REPORTED_ERRORS ? `${shown}; and ${errors.length - MAX_REPORTED_ERRORS} more` : shown;
}

const TYPES = ['string', 'number', 'integer', 'boolean', 'object', 'array', 'null'] as const;
type JsonType = (typeof TYPES)[number];
const UNSUPPORTED = ['$ref', 'anyOf', 'oneOf', 'allOf', 'not', 'if', 'then', 'else', 'patternProperties', 'prefixItems', 'dependentSchemas', 'unevaluatedProperties'];
const NUMBER_KEYWORDS = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'];
const COUNT_KEYWORDS = ['minLength', 'maxLength', 'minItems', 'maxItems'];

type Schema = Record<string, unknown>;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * What is wrong with an `outputSchema` for `structured_json`, or null when the service
 * can enforce it. Used at submission (400) so a task never runs against a schema that
 * cannot be checked.
 */
export function outputSchemaProblem(schema: unknown, path = 'outputSchema', depth = 0): string | null {
  if (!isObject(schema)) return `${path} must be a JSON Schema object`;
  if (depth > MAX_SCHEMA_DEPTH) return `${path} is nested too deeply (at most ${MAX_SCHEMA_DEPTH} levels)`;
  for (const k of UNSUPPORTED) if (k in schema) return `${path} uses "${k}", which is not supported (supported: type, properties, required, items, additionalProperties, enum, minimum, maximum, minLength, maxLength, pattern, minItems, maxItems)`;
  if ('type' in schema) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.length || types.some((t) => !(TYPES as readonly unknown[]).includes(t))) return `${path}.type must be one of ${TYPES.join(', ')} (or an array of them)`;
  }
  if ('properties' in schema) {
    if (!isObject(schema.properties)) return `${path}.properties must be an object of schemas`;
    for (const [name, sub] of Object.entries(schema.properties)) {
      const p = outputSchemaProblem(sub, `${path}.properties.${name}`, depth + 1);
      if (p) return p;
    }
  }
  if ('required' in schema && (!Array.isArray(schema.required) || schema.required.some((r) => typeof r !== 'string'))) return `${path}.required must be an array of property names`;
  if ('items' in schema) {
    const p = outputSchemaProblem(schema.items, `${path}.items`, depth + 1);
    if (p) return p;
  }
  if ('additionalProperties' in schema && typeof schema.additionalProperties !== 'boolean') {
    const p = outputSchemaProblem(schema.additionalProperties, `${path}.additionalProperties`, depth + 1);
    if (p) return p;
  }
  if ('enum' in schema && (!Array.isArray(schema.enum) || schema.enum.length === 0)) return `${path}.enum must be a non-empty array`;
  for (const k of NUMBER_KEYWORDS) if (k in schema && typeof schema[k] !== 'number') return `${path}.${k} must be a number`;
  for (const k of COUNT_KEYWORDS) if (k in schema && (!Number.isInteger(schema[k]) || (schema[k] as number) < 0)) return `${path}.${k} must be a non-negative integer`;
  if ('pattern' in schema) {
    if (typeof schema.pattern !== 'string') return `${path}.pattern must be a string`;
    try {
      new RegExp(schema.pattern, 'u');
    } catch {
      return `${path}.pattern is not a valid regular expression`;
    }
  }
  return null;
}

/** The column list of `structured_csv`, or what is wrong with it. */
export function csvColumnsProblem(columns: unknown): string | null {
  if (!Array.isArray(columns) || columns.length === 0) return 'outputSchema must be a non-empty array of column names';
  if (columns.some((c) => typeof c !== 'string' || !c.trim())) return 'outputSchema column names must be non-empty strings';
  if (new Set(columns).size !== columns.length) return 'outputSchema column names must be unique';
  return null;
}

function typeOf(value: unknown): JsonType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value as JsonType;
}

function typeMatches(value: unknown, type: unknown): boolean {
  const actual = typeOf(value);
  if (type === 'number') return actual === 'number' || actual === 'integer';
  return actual === type;
}

/** Every mismatch, each with the JSON path where it is ("$" is the document). */
export function validateAgainstSchema(schema: unknown, value: unknown, path = '$'): string[] {
  if (!isObject(schema)) return [];
  const s = schema as Schema;
  const errors: string[] = [];
  if ('type' in s) {
    const types = Array.isArray(s.type) ? s.type : [s.type];
    if (!types.some((t) => typeMatches(value, t))) {
      errors.push(`${path}: expected ${types.join(' or ')}, got ${typeOf(value) === 'integer' ? 'number' : typeOf(value)}`);
      return errors;
    }
  }
  if (Array.isArray(s.enum) && !s.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) {
    errors.push(`${path}: must be one of ${s.enum.map((e) => JSON.stringify(e)).join(', ')}`);
  }
  if (typeof value === 'string') {
    const length = [...value].length;
    if (typeof s.minLength === 'number' && length < s.minLength) errors.push(`${path}: must be at least ${s.minLength} characters long`);
    if (typeof s.maxLength === 'number' && length > s.maxLength) errors.push(`${path}: must be at most ${s.maxLength} characters long`);
    if (typeof s.pattern === 'string' && !new RegExp(s.pattern, 'u').test(value)) errors.push(`${path}: must match the pattern ${s.pattern}`);
  }
  if (typeof value === 'number') {
    if (typeof s.minimum === 'number' && value < s.minimum) errors.push(`${path}: must be >= ${s.minimum}`);
    if (typeof s.maximum === 'number' && value > s.maximum) errors.push(`${path}: must be <= ${s.maximum}`);
    if (typeof s.exclusiveMinimum === 'number' && value <= s.exclusiveMinimum) errors.push(`${path}: must be > ${s.exclusiveMinimum}`);
    if (typeof s.exclusiveMaximum === 'number' && value >= s.exclusiveMaximum) errors.push(`${path}: must be < ${s.exclusiveMaximum}`);
  }
  if (Array.isArray(value)) {
    if (typeof s.minItems === 'number' && value.length < s.minItems) errors.push(`${path}: must have at least ${s.minItems} items`);
    if (typeof s.maxItems === 'number' && value.length > s.maxItems) errors.push(`${path}: must have at most ${s.maxItems} items`);
    if (isObject(s.items)) value.forEach((item, i) => errors.push(...validateAgainstSchema(s.items, item, `${path}[${i}]`)));
  }
  if (isObject(value)) {
    const properties = isObject(s.properties) ? s.properties : {};
    for (const name of Array.isArray(s.required) ? s.required : []) {
      if (typeof name === 'string' && !(name in value)) errors.push(`${path}: missing required property "${name}"`);
    }
    for (const [name, v] of Object.entries(value)) {
      const child = `${path}.${name}`;
      if (name in properties) errors.push(...validateAgainstSchema(properties[name], v, child));
      else if (s.additionalProperties === false) errors.push(`${path}: property "${name}" is not allowed (allowed: ${Object.keys(properties).join(', ') || 'none'})`);
      else if (isObject(s.additionalProperties)) errors.push(...validateAgainstSchema(s.additionalProperties, v, child));
    }
  }
  return errors;
}

// ---- CSV -----------------------------------------------------------------------------

function checkCsv(columns: string[], message: string): StructuredCheck {
  if (!columns.length) return { ok: false, error: 'No CSV columns were given for this task.' };
  const text = stripFence(message);
  if (/^[[{]/.test(text)) {
    const parsed = parseJsonText(text);
    if (parsed.ok) return rowsToCsv(columns, parsed.value);
  }
  const records = parseCsv(text);
  if (!records.ok) return { ok: false, error: `The output is not valid CSV: ${records.error}` };
  const [header, ...rows] = records.rows;
  const got = (header ?? []).map((h) => h.trim());
  if (got.length !== columns.length || got.some((h, i) => h !== columns[i])) {
    return { ok: false, error: `The first CSV row must be exactly these columns: ${columns.join(',')} (got: ${got.join(',') || 'nothing'})` };
  }
  const bad = rows.findIndex((r) => r.length !== columns.length);
  if (bad >= 0) return { ok: false, error: `CSV row ${bad + 2} has ${rows[bad].length} fields; every row needs ${columns.length}` };
  return { ok: true, value: writeCsv([columns, ...rows]) };
}

/** JSON rows (an array of objects, or {rows: [...]}) with the given columns, written as CSV. */
function rowsToCsv(columns: string[], value: unknown): StructuredCheck {
  const rows = Array.isArray(value) ? value : isObject(value) && Array.isArray(value.rows) ? value.rows : null;
  if (!rows) return { ok: false, error: `Give the rows as a JSON array of objects with the columns ${columns.join(', ')}, or as CSV text.` };
  const errors: string[] = [];
  const lines: string[][] = [columns];
  rows.forEach((row, i) => {
    if (!isObject(row)) {
      errors.push(`row ${i + 1} is not an object`);
      return;
    }
    const extra = Object.keys(row).filter((k) => !columns.includes(k));
    if (extra.length) errors.push(`row ${i + 1} has unknown column${extra.length > 1 ? 's' : ''} ${extra.join(', ')}`);
    lines.push(
      columns.map((c) => {
        const v = row[c];
        if (v === undefined || v === null) return '';
        if (typeof v === 'object') {
          errors.push(`row ${i + 1} column ${c} must be a string, number or boolean`);
          return '';
        }
        return String(v);
      }),
    );
  });
  if (errors.length) return { ok: false, error: `The rows do not fit the columns ${columns.join(', ')}: ${formatErrors(errors)}` };
  return { ok: true, value: writeCsv(lines) };
}

/** RFC 4180: fields with a comma, a quote or a line break are quoted, quotes doubled, lines end with CRLF. */
export function writeCsv(rows: string[][]): string {
  const field = (v: string) => (/[",\r\n]/.test(v) || /^\s|\s$/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
  return rows.map((r) => r.map(field).join(',')).join('\r\n') + '\r\n';
}

/** RFC 4180 records (quoted fields may hold commas, quotes and line breaks); blank lines are skipped. */
export function parseCsv(text: string): { ok: true; rows: string[][] } | { ok: false; error: string } {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let fieldStarted = false;
  const endRow = () => {
    if (row.length || fieldStarted || field) {
      row.push(field);
      rows.push(row);
    }
    row = [];
    field = '';
    fieldStarted = false;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') {
        quoted = false;
        const next = text[i + 1];
        if (next !== undefined && next !== ',' && next !== '\n' && next !== '\r') return { ok: false, error: `unexpected "${next}" after a closing quote in line ${rows.length + 1}` };
      } else field += c;
      continue;
    }
    if (c === '"' && !field) {
      quoted = true;
      fieldStarted = true;
    } else if (c === ',') {
      row.push(field);
      field = '';
      fieldStarted = true;
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      endRow();
    } else field += c;
  }
  if (quoted) return { ok: false, error: 'a quoted field is not closed' };
  endRow();
  if (!rows.length) return { ok: false, error: 'it is empty' };
  return { ok: true, rows };
}
