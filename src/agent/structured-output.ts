/**
 * Structured task output: the agent's `done` message checked against what the caller
 * asked for before the task may complete.
 *  - `structured_json`: the message must be JSON matching `outputSchema`, a JSON Schema
 *    (draft-07), checked with ajv.
 *  - `structured_csv`: `outputSchema` is the column list. The model may answer CSV whose
 *    header row is exactly those columns, or JSON rows (objects with those columns), which
 *    are written out as CSV here (RFC 4180: CRLF, quotes doubled).
 * On failure the error says what is wrong in words the model can act on.
 */
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { TaskParams } from '../workflows/types';

export type StructuredCheck = { ok: true; value: string } | { ok: false; error: string };

const MAX_REPORTED_ERRORS = 10;

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

type Schema = Record<string, unknown>;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** JSON Schema draft-07 (the dialect models and providers speak), every error reported, formats checked. */
const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: true, addUsedSchema: false });
addFormats(ajv);
const MAX_SCHEMA_BYTES = 64 * 1024;
/** Compiled validators of recent schemas (a task checks its result a few times). */
const compiled = new Map<string, ValidateFunction>();

function compile(schema: Schema): ValidateFunction {
  const key = JSON.stringify(schema);
  let fn = compiled.get(key);
  if (!fn) {
    const { $schema: _dialect, ...rest } = schema;
    fn = ajv.compile(rest);
    if (compiled.size >= 100) compiled.delete(compiled.keys().next().value!);
    compiled.set(key, fn);
  }
  return fn;
}

/**
 * What is wrong with an `outputSchema` for `structured_json`, or null when it is a JSON
 * Schema the service can enforce. Used at submission (400) so a task never runs against a
 * schema that cannot be checked.
 */
export function outputSchemaProblem(schema: unknown): string | null {
  if (!isObject(schema)) return 'outputSchema must be a JSON Schema object';
  if (JSON.stringify(schema).length > MAX_SCHEMA_BYTES) return `outputSchema is larger than ${MAX_SCHEMA_BYTES / 1024} KB`;
  const { $schema: _dialect, ...rest } = schema;
  if (!ajv.validateSchema(rest)) {
    const first = ajv.errors?.[0];
    const where = ['outputSchema', ...(first?.instancePath ?? '').split('/').slice(1)].join('.');
    return `outputSchema is not a valid JSON Schema: ${where} ${first?.message ?? 'is invalid'}`;
  }
  try {
    compile(schema);
  } catch (err) {
    return `outputSchema cannot be used: ${err instanceof Error ? err.message : String(err)}`;
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

/** Every mismatch, each with the JSON path where it is ("$" is the document). */
export function validateAgainstSchema(schema: unknown, value: unknown): string[] {
  if (!isObject(schema)) return [];
  const validate = compile(schema);
  if (validate(value)) return [];
  return (validate.errors ?? []).map(describeError);
}

function describeError(e: ErrorObject): string {
  const path = '$' + e.instancePath.split('/').slice(1).map((seg) => {
    const name = seg.replace(/~1/g, '/').replace(/~0/g, '~');
    return /^\d+$/.test(name) ? `[${name}]` : /^[A-Za-z_$][\w$]*$/.test(name) ? `.${name}` : `[${JSON.stringify(name)}]`;
  }).join('');
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return `${path}: missing required property "${String(params.missingProperty)}"`;
    case 'additionalProperties':
      return `${path}: property "${String(params.additionalProperty)}" is not allowed`;
    case 'enum':
      return `${path}: must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    default:
      return `${path}: ${e.message ?? e.keyword}`;
  }
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
