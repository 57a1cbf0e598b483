/**
 * Structured task output: the agent's `done` message checked against what the caller
 * asked for before the task may complete.
 *  - `structured_json`: the message must be JSON matching `outputSchema`, a JSON Schema
 *    (draft-07), checked with ajv.
 *  - `structured_csv`: `outputSchema` is the column list. The model may answer CSV whose
 *    header row is exactly those columns, or JSON rows (objects with those columns), which
 *    are written out as CSV here (RFC 4180: CRLF, quotes doubled).
 * On failure the error says what is wrong in words the model can act on. JSON Schema
 * work runs on worker threads with RE2 patterns (schema-engine.ts, schema-workers.ts).
 */
import { stringify as stringifyCsv } from 'csv-stringify/sync';
import { ServiceError } from '../contracts/errors';
import type { TaskParams } from '../contracts/session-types';
import { isJsonObject as isObject, outputSchemaLimitProblem } from '../contracts/output-schema';
import type { StructuredCheck } from './schema-engine';
import { SchemaBusyError, SchemaLimitError, SchemaWorkers } from './schema-workers';

export type { StructuredCheck } from './schema-engine';

const MAX_REPORTED_ERRORS = 10;

/**
 * Compiling and applying JSON Schemas happens on worker threads (schema-workers.ts), each
 * job limited in time, so no schema holds up the API or a browser worker.
 */
const workers = new SchemaWorkers();

/** Stops the schema threads (tests, shutdown). */
export function closeSchemaWorkers(): Promise<void> {
  return workers.close();
}

export async function checkStructuredOutput(params: Pick<TaskParams, 'outputType' | 'outputSchema'>, message: string): Promise<StructuredCheck> {
  switch (params.outputType) {
    case 'structured_json':
      if (!isObject(params.outputSchema)) return { ok: false, error: 'No JSON Schema was given for this task.' };
      try {
        return await workers.checkJson(params.outputSchema, message);
      } catch (err) {
        if (err instanceof SchemaLimitError || err instanceof SchemaBusyError) return { ok: false, error: `The output could not be checked against the JSON Schema (${err.message}). Answer with a shorter JSON document.` };
        throw err;
      }
    case 'structured_csv':
      return checkCsv(Array.isArray(params.outputSchema) ? params.outputSchema.map(String) : [], message);
    default:
      return { ok: true, value: message };
  }
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

/**
 * What is wrong with an `outputSchema` for `structured_json`, or null when it is a JSON
 * Schema the service can enforce (the meta-schema, then compiling it on a schema thread).
 * Used at submission (400) so a task never runs against a schema that cannot be checked.
 * Too many schemas being checked at once is a 503 (retryable).
 */
export async function outputSchemaProblem(schema: unknown): Promise<string | null> {
  const limit = outputSchemaLimitProblem(schema);
  if (limit) return limit;
  try {
    return await workers.problem(schema as Record<string, unknown>);
  } catch (err) {
    if (err instanceof SchemaLimitError) return `outputSchema is too complex: compiling it ${err.message}`;
    if (err instanceof SchemaBusyError) throw new ServiceError('SERVICE_OVERLOADED', `${err.message}; try again shortly`);
    throw err;
  }
}


/** Every mismatch, each with the JSON path where it is ("$" is the document). */
export async function validateAgainstSchema(schema: unknown, value: unknown): Promise<string[]> {
  if (!isObject(schema)) return [];
  return workers.errors(schema, value);
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
  const got = (header ?? []).map((name) => name.trim());
  if (got.length !== columns.length || got.some((name, index) => name !== columns[index])) {
    return { ok: false, error: `The first CSV row must be exactly these columns: ${columns.join(',')} (got: ${got.join(',') || 'nothing'})` };
  }
  const bad = rows.findIndex((row) => row.length !== columns.length);
  if (bad >= 0) return { ok: false, error: `CSV row ${bad + 2} has ${rows[bad].length} fields; every row needs ${columns.length}` };
  return { ok: true, value: writeCsv([columns, ...rows]) };
}

/** JSON rows (an array of objects, or {rows: [...]}) with the given columns, written as CSV. */
function rowsToCsv(columns: string[], value: unknown): StructuredCheck {
  const rows = Array.isArray(value) ? value : isObject(value) && Array.isArray(value.rows) ? value.rows : null;
  if (!rows) return { ok: false, error: `Give the rows as a JSON array of objects with the columns ${columns.join(', ')}, or as CSV text.` };
  const errors: string[] = [];
  const lines: string[][] = [columns];
  rows.forEach((row, index) => {
    if (!isObject(row)) {
      errors.push(`row ${index + 1} is not an object`);
      return;
    }
    const extra = Object.keys(row).filter((key) => !columns.includes(key));
    if (extra.length) errors.push(`row ${index + 1} has unknown column${extra.length > 1 ? 's' : ''} ${extra.join(', ')}`);
    lines.push(
      columns.map((column) => {
        const cell = row[column];
        if (cell === undefined || cell === null) return '';
        if (typeof cell === 'object') {
          errors.push(`row ${index + 1} column ${column} must be a string, number or boolean`);
          return '';
        }
        return String(cell);
      }),
    );
  });
  if (errors.length) return { ok: false, error: `The rows do not fit the columns ${columns.join(', ')}: ${formatErrors(errors)}` };
  return { ok: true, value: writeCsv(lines) };
}

/**
 * RFC 4180: fields with a comma, a quote or a line break are quoted, quotes doubled, lines
 * end with CRLF; fields with leading or trailing blanks are quoted too, so they survive.
 */
export function writeCsv(rows: string[][]): string {
  return stringifyCsv(rows, { record_delimiter: 'windows', quoted_match: /[\r\n]|^\s|\s$/ });
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
    const char = text[i];
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (char === '"') {
        quoted = false;
        const next = text[i + 1];
        if (next !== undefined && next !== ',' && next !== '\n' && next !== '\r') return { ok: false, error: `unexpected "${next}" after a closing quote in line ${rows.length + 1}` };
      } else field += char;
      continue;
    }
    if (char === '"' && !field) {
      quoted = true;
      fieldStarted = true;
    } else if (char === ',') {
      row.push(field);
      field = '';
      fieldStarted = true;
    } else if (char === '\n' || char === '\r') {
      if (char === '\r' && text[i + 1] === '\n') i++;
      endRow();
    } else field += char;
  }
  if (quoted) return { ok: false, error: 'a quoted field is not closed' };
  endRow();
  if (!rows.length) return { ok: false, error: 'it is empty' };
  return { ok: true, rows };
}
