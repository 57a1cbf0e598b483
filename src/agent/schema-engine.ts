/**
 * The JSON Schema work of structured output: checking that an `outputSchema` can be
 * enforced (meta-schema, then compiling it) and validating a result against it.
 *
 * The functions of the engine are self-contained on purpose: schema-workers.ts runs their
 * source (engineSource) in worker threads, so compiling a large schema never holds up the
 * thread that serves the API or drives the browser. They use nothing but the libraries they
 * are handed and each other; a function added here that the engine calls goes into
 * ENGINE_FUNCTIONS.
 *
 * `pattern` and `patternProperties` run on RE2 (re2js, linear-time matching), never on
 * the backtracking RegExp engine, so no pattern can take exponential time on a result;
 * RE2 has no look-around and no back-references, and a schema using them is refused.
 */
import type AjvClass from 'ajv';
import type { RE2JS as RE2JSClass } from 're2js';

export interface SchemaLibraries {
  Ajv: typeof AjvClass;
  addFormats: (ajv: AjvClass) => unknown;
  RE2JS: typeof RE2JSClass;
}

export type StructuredCheck = { ok: true; value: string } | { ok: false; error: string };

export interface SchemaEngine {
  /** What is wrong with the schema (meta-schema or compilation), or null when it can be enforced. */
  problem(schema: Record<string, unknown>): string | null;
  /** Every mismatch of `value`, each with the JSON path where it is ("$" is the document). */
  errors(schema: Record<string, unknown>, value: unknown): string[];
  /** The agent's `done` message checked against the schema. */
  checkJson(schema: Record<string, unknown>, message: string): StructuredCheck;
}

type Validate = ReturnType<AjvClass['compile']>;

/** Compiles schemas with ajv, patterns on RE2; compiled schemas cached, ajv renewed now and then. */
interface SchemaCompiler {
  /** The ajv instance of the moment (a new one after many compilations). */
  readonly ajv: AjvClass;
  compile(schema: Record<string, unknown>): Validate;
}

export function createSchemaEngine(lib: SchemaLibraries): SchemaEngine {
  const compiler = schemaCompiler(lib);
  const errors = (schema: Record<string, unknown>, value: unknown): string[] => {
    const validate = compiler.compile(schema);
    if (validate(value)) return [];
    return (validate.errors ?? []).map((error) => describeSchemaError(error as never));
  };
  return {
    problem: (schema) => schemaProblem(compiler, schema),
    errors,
    checkJson: (schema, message) => checkJsonMessage(errors, schema, message),
  };
}

function schemaCompiler(lib: SchemaLibraries): SchemaCompiler {
  const MAX_CACHED = 50;
  /** A fresh ajv instance after this many compilations: each one keeps its compiled schemas' code. */
  const RENEW_AFTER = 200;

  // A pattern is compiled once per schema; `toString` keys ajv's per-instance pattern cache.
  const regExp = Object.assign(
    (pattern: string) => {
      const compiled = lib.RE2JS.compile(pattern);
      return { test: (text: string) => compiled.test(text), toString: () => `re2:${pattern}` };
    },
    { code: 're2js' },
  );
  const newAjv = () => {
    const ajv = new lib.Ajv({ allErrors: true, strict: false, validateFormats: true, addUsedSchema: false, code: { regExp } });
    lib.addFormats(ajv);
    return ajv;
  };
  let ajv = newAjv();
  let compilations = 0;
  const cache = new Map<string, Validate>();

  return {
    get ajv() {
      return ajv;
    },
    compile(schema) {
      const key = JSON.stringify(schema);
      const hit = cache.get(key);
      if (hit) {
        cache.delete(key);
        cache.set(key, hit);
        return hit;
      }
      if (++compilations > RENEW_AFTER) {
        ajv = newAjv();
        compilations = 1;
      }
      const validate = ajv.compile(withoutDialect(schema));
      if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value as string);
      cache.set(key, validate);
      return validate;
    },
  };
}

function withoutDialect(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = schema;
  return rest;
}

/** What is wrong with the schema (meta-schema or compilation), or null when it can be enforced. */
function schemaProblem(compiler: SchemaCompiler, schema: Record<string, unknown>): string | null {
  const rest = withoutDialect(schema);
  if (!compiler.ajv.validateSchema(rest)) {
    const first = compiler.ajv.errors?.[0];
    const where = ['outputSchema', ...(first?.instancePath ?? '').split('/').slice(1)].join('.');
    return `outputSchema is not a valid JSON Schema: ${where} ${first?.message ?? 'is invalid'}`;
  }
  try {
    compiler.compile(schema);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    // re2js names its own errors; the user needs to know which pattern and why.
    if (err instanceof Error && /^RE2JS/.test(err.constructor.name)) return `outputSchema cannot be used: a pattern is not supported (${message}); patterns use RE2 syntax, without look-around or back-references`;
    return `outputSchema cannot be used: ${message}`;
  }
  return null;
}

/** One mismatch, with the JSON path where it is ("$" is the document). */
function describeSchemaError(error: { instancePath: string; keyword: string; params: Record<string, unknown>; message?: string }): string {
  const path =
    '$' +
    error.instancePath
      .split('/')
      .slice(1)
      .map((segment) => {
        const name = segment.replace(/~1/g, '/').replace(/~0/g, '~');
        return /^\d+$/.test(name) ? `[${name}]` : /^[A-Za-z_$][\w$]*$/.test(name) ? `.${name}` : `[${JSON.stringify(name)}]`;
      })
      .join('');
  switch (error.keyword) {
    case 'required':
      return `${path}: missing required property "${String(error.params.missingProperty)}"`;
    case 'additionalProperties':
      return `${path}: property "${String(error.params.additionalProperty)}" is not allowed`;
    case 'enum':
      return `${path}: must be one of ${(error.params.allowedValues as unknown[]).map((value) => JSON.stringify(value)).join(', ')}`;
    default:
      return `${path}: ${error.message ?? error.keyword}`;
  }
}

/** The message without a Markdown code fence around it. */
function stripFence(message: string): string {
  const text = message.trim().replace(/^\uFEFF/, '');
  const fenced = /^```[a-zA-Z0-9_-]*\s*\n([\s\S]*?)\n?```$/.exec(text);
  return (fenced ? fenced[1] : text).trim();
}

/** The agent's `done` message checked against the schema: the JSON, compact, or what is wrong with it. */
function checkJsonMessage(errors: (schema: Record<string, unknown>, value: unknown) => string[], schema: Record<string, unknown>, message: string): StructuredCheck {
  const MAX_REPORTED_ERRORS = 10;
  const text = stripFence(message);
  let value: unknown;
  if (!text) return { ok: false, error: 'The output is not valid JSON (the message is empty). Answer with only the JSON document.' };
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, error: `The output is not valid JSON (${err instanceof Error ? err.message : String(err)}). Answer with only the JSON document.` };
  }
  const found = errors(schema, value);
  if (found.length) {
    const shown = found.slice(0, MAX_REPORTED_ERRORS).join('; ');
    return { ok: false, error: `The output does not match the JSON Schema: ${found.length > MAX_REPORTED_ERRORS ? `${shown}; and ${found.length - MAX_REPORTED_ERRORS} more` : shown}` };
  }
  return { ok: true, value: JSON.stringify(value) };
}

/** Every function of the engine: a worker thread declares them all (see engineSource). */
const ENGINE_FUNCTIONS: ((...args: never[]) => unknown)[] = [createSchemaEngine, schemaCompiler, withoutDialect, schemaProblem, describeSchemaError, stripFence, checkJsonMessage];

/** The engine's source for a worker thread: function declarations, `createSchemaEngine` among them. */
export function engineSource(): string {
  return ENGINE_FUNCTIONS.map((fn) => fn.toString()).join('\n');
}
